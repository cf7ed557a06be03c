import { createHash, randomBytes } from 'node:crypto'
import { afterCommit, type Jobs, type Sealer } from '@svc/kit'
import { strToU8, zipSync } from 'fflate'
import type { Logger } from 'pino'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type Actor, type EventService, SYSTEM } from '../events/index.ts'
import { SECTIONS, type SectionDeps } from './sections.ts'
import * as store from './store.ts'
import type { Membership } from '../../http/index.ts'

export const EXPORT_QUEUE = 'tenant-export'
/** A ready archive's expiry: a job due when its seven days end drops the bytes then. */
export const EXPIRE_QUEUE = 'tenant-export-expiry'
export const EXPORT_FORMAT = 'rental-tenant-export/v1'
/** How long a ready archive is kept (then its bytes are dropped and the export is `expired`). */
export const ARCHIVE_DAYS = 7
const RETRIES = 2
/** An export unfinished after this long lost its job (its retries ran out in crashes): it no longer blocks a new one. */
const STALE_MS = 60 * 60_000

export interface ExportDeps {
  db: RentalDb
  jobs: Jobs
  sealer: Sealer
  now: () => Date
  log: Logger
  events: EventService
  sections: SectionDeps
}

const sealContext = (orgId: string, id: string) => `tenant-export:${orgId}:${id}`
const notFound = (id: string) => rentalError('export_not_found', `no export ${id} in the organization`)

/** An export as GET /v1/tenant/exports/{id} answers it. */
export function exportView(row: NonNullable<Awaited<ReturnType<typeof store.exportOf>>>, now: Date) {
  const expired = row.state === 'expired' || (row.expires_at !== null && row.expires_at <= now)
  const state = expired ? 'expired' : row.state
  return {
    id: row.id,
    state,
    progress: {
      done: row.sections_done,
      total: row.sections_total,
      section: row.section,
      percent: row.sections_total === 0 ? 100 : Math.floor((row.sections_done * 100) / row.sections_total),
    },
    error: row.error,
    archive:
      state === 'ready'
        ? {
            download_url: `/v1/tenant/exports/${row.id}/download`,
            bytes: row.archive_bytes!,
            sha256: row.archive_sha256!,
            format: EXPORT_FORMAT,
          }
        : null,
    requested_by: row.requested_by,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
  }
}

/**
 * Starts the organization's export: a row (`queued`) and its durable job, in one transaction. One
 * export at a time per organization: while one is queued or running, 409 `export_in_progress`
 * names it (poll it instead).
 */
export async function startExport(deps: ExportDeps, actor: Membership, by: Actor) {
  const row = await inTransaction(deps.db, async (trx) => {
    await store.lockOrgExports(trx, actor.orgId)
    let running = await store.unfinishedOf(trx, actor.orgId)
    if (running && running.created_at.getTime() < deps.now().getTime() - STALE_MS) {
      await store.setProgress(trx, running.id, {
        state: 'failed',
        error: 'the export did not finish within an hour',
      })
      running = undefined
    }
    if (running)
      throw rentalError(
        'export_in_progress',
        `the export ${running.id} is ${running.state}: follow it at /v1/tenant/exports/${running.id}`,
      )
    const id = `exp_${randomBytes(12).toString('base64url')}`
    const made = await store.insertExport(trx, {
      id,
      org_id: actor.orgId,
      requested_by: actor.memberId,
      sections_total: SECTIONS.length,
    })
    await deps.events.record(trx, {
      orgId: actor.orgId,
      type: 'tenant.export_requested',
      subjects: { export_id: id },
      actor: by,
      data: { sections: SECTIONS.length },
    })
    await deps.jobs.enqueue(trx, EXPORT_QUEUE, { export_id: id })
    afterCommit(trx, () => deps.jobs.wake(EXPORT_QUEUE))
    return made
  })
  return exportView(row, deps.now())
}

export async function exportStatus(deps: ExportDeps, orgId: string, id: string) {
  const row = await store.exportOf(deps.db, orgId, id)
  if (!row) throw notFound(id)
  return exportView(row, deps.now())
}

export async function exportList(deps: ExportDeps, orgId: string) {
  const now = deps.now()
  return { exports: (await store.exportsOf(deps.db, orgId, 20)).map((r) => exportView(r, now)) }
}

/**
 * The archive's bytes, opened: 409 `export_not_ready` naming the state while it is gathered or
 * when it failed, 410 `export_expired` once past its seven days. Each download is recorded.
 */
export async function exportArchive(deps: ExportDeps, orgId: string, id: string, by: Actor) {
  const row = await store.exportOf(deps.db, orgId, id)
  if (!row) throw notFound(id)
  const view = exportView(row, deps.now())
  if (view.state === 'expired')
    throw rentalError('export_expired', `the export ${id} expired at ${view.expires_at}: start a new one`)
  const sealed = view.state === 'ready' ? await store.sealedArchiveOf(deps.db, orgId, id) : null
  if (!sealed) throw rentalError('export_not_ready', `the export ${id} is ${view.state}, not ready`)
  const bytes = deps.sealer.open(sealed, sealContext(orgId, id))
  await inTransaction(deps.db, (trx) =>
    deps.events.record(trx, {
      orgId,
      type: 'tenant.export_downloaded',
      subjects: { export_id: id },
      actor: by,
      data: { bytes: bytes.length, sha256: row.archive_sha256 },
    }),
  )
  const day = row.created_at.toISOString().slice(0, 10)
  return { bytes, file: `${orgId}-export-${day}-${id}.zip` }
}

const json = (value: unknown) => strToU8(`${JSON.stringify(value, null, 2)}\n`)
const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

/** Gathers every section, recording progress after each, and keeps the zip sealed. */
async function runExport(deps: ExportDeps, id: string) {
  const row = await store.exportById(deps.db, id)
  if (!row || row.state === 'ready' || row.state === 'expired' || row.state === 'failed') return
  const orgId = row.org_id
  await store.setProgress(deps.db, id, { state: 'running', sections_done: 0, section: null, error: null })
  const files: Record<string, Uint8Array> = {}
  const manifest: Array<{
    section: string
    file: string
    rows: number | null
    bytes: number
    sha256: string
  }> = []
  for (const [i, [name, read]] of SECTIONS.entries()) {
    await store.setProgress(deps.db, id, { section: name, sections_done: i })
    const value = await read(deps.sections, orgId)
    const data = json(value)
    const file = `${name}.json`
    files[file] = data
    manifest.push({
      section: name,
      file,
      rows: Array.isArray(value) ? value.length : null,
      bytes: data.length,
      sha256: sha256(data),
    })
  }
  const now = deps.now()
  files['manifest.json'] = json({
    format: EXPORT_FORMAT,
    export_id: id,
    organization_id: orgId,
    requested_by: row.requested_by,
    exported_at: now.toISOString(),
    files: manifest,
  })
  const zip = zipSync(files, { level: 6, mtime: now })
  const archive = deps.sealer.seal(zip, sealContext(orgId, id))
  const expires = new Date(now.getTime() + ARCHIVE_DAYS * 86_400_000)
  await inTransaction(deps.db, async (trx) => {
    await store.setReady(trx, id, {
      archive_sealed: archive,
      archive_bytes: zip.length,
      archive_sha256: sha256(zip),
      completed_at: now,
      expires_at: expires,
    })
    await store.setProgress(trx, id, { sections_done: SECTIONS.length })
    await deps.jobs.enqueue(trx, EXPIRE_QUEUE, { export_id: id }, { startAfter: expires })
    await deps.events.record(trx, {
      orgId,
      type: 'tenant.export_ready',
      subjects: { export_id: id },
      actor: SYSTEM,
      data: { bytes: zip.length, sections: SECTIONS.length, expires_at: expires.toISOString() },
    })
  })
}

/** The worker: an export per job, retried; past the retries the export is `failed` with its reason. */
export async function startExportWorker(deps: ExportDeps) {
  await deps.jobs.queue(EXPORT_QUEUE, { retryLimit: RETRIES, retryDelay: 2, expireInSeconds: 15 * 60 })
  await deps.jobs.queue(EXPIRE_QUEUE, { retryLimit: 5 })
  await deps.jobs.work(EXPIRE_QUEUE, async () => {
    await store.expireArchives(deps.db, deps.now())
  })
  await deps.jobs.work<{ export_id: string }>(EXPORT_QUEUE, async (data, job) => {
    // the bytes of archives past their seven days go on every run
    await store.expireArchives(deps.db, deps.now())
    try {
      await runExport(deps, data.export_id)
    } catch (err) {
      if ((job.retryCount ?? 0) < RETRIES) throw err
      const error = (err as Error).message.slice(0, 500)
      deps.log.warn({ export_id: data.export_id, err: error }, 'tenant export failed')
      const row = await store.exportById(deps.db, data.export_id)
      if (!row) return
      await inTransaction(deps.db, async (trx) => {
        await store.setProgress(trx, row.id, { state: 'failed', error: 'the export could not be gathered' })
        await deps.events.record(trx, {
          orgId: row.org_id,
          type: 'tenant.export_failed',
          subjects: { export_id: row.id },
          actor: SYSTEM,
          data: { error },
        })
      })
    }
  })
}
