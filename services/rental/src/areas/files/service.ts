import { createHash, randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import { AppError, type Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import { CHUNK_BYTES, type KeyRing, newDataKey, openChunk, sealChunk } from './crypt.ts'
import { fileNameOf, mediaTypeOf } from './names.ts'
import * as store from './store.ts'
import type { FileRow, FileStore, StoredChunk } from './store.ts'

export interface FileDeps {
  ctx: Pick<RentalContext, 'db' | 'receipts' | 'now' | 'log'>
  engagements: EngagementService
  events: EventService
  keys: KeyRing
  files: FileStore
  limits: { fileBytes: number; orgBytes: number }
  /** The retention area's `files.hold` reaction: a hold over the engagement stops DELETE. */
  hold?: HoldCheck
}

export interface Caller {
  orgId: string
  actor: Actor
}

/** Chunks written per insert while a file streams in (16 × 64 KiB: 1 MiB). */
const WRITE_BATCH = 16

const notFound = (id: string) => rentalError('file_not_found', `no file ${id}`)

export function fileView(row: FileRow) {
  return {
    id: row.id,
    engagement_id: row.engagement_id,
    name: row.name!,
    content_type: row.content_type,
    size_bytes: Number(row.size_bytes),
    sha256: `sha256:${row.sha256}`,
    created_at: row.created_at.toISOString(),
    url: `/api/files/${row.id}`,
  }
}

/** What an upload brings: its name and media type as given, and its bytes. */
export interface Incoming {
  name: string | undefined
  contentType: string | undefined
  body: AsyncIterable<Buffer | Uint8Array>
}

/** 413: the file is larger than one file may be, or than what the organization has left. */
function tooLarge(limit: number, deps: FileDeps) {
  return rentalError(
    'payload_too_large',
    limit < deps.limits.fileBytes
      ? `the organization has ${limit} bytes left of its ${deps.limits.orgBytes} for files`
      : `a file may be at most ${deps.limits.fileBytes} bytes`,
  )
}

/**
 * Stores a file of the engagement: the organization's engagement (else 404), then `open` gives
 * the name, type and bytes (told the most it may take, so a declared length above it is 413
 * before a byte is read). The bytes are hashed and encrypted chunk by chunk as they stream in,
 * under a fresh data key sealed with the service key; past the limit it is 413. Then, in one
 * transaction with the organization's quota locked, the file becomes `stored` with its event and
 * `file.stored` receipt. Any failure removes what was written.
 */
export async function upload(
  deps: FileDeps,
  caller: Caller,
  engagementId: string,
  open: (limit: number) => Promise<Incoming>,
) {
  if (!(await deps.engagements.engagementOf(caller.orgId, engagementId)))
    throw rentalError('engagement_not_found', `no engagement ${engagementId}`)
  const limit = Math.min(
    deps.limits.fileBytes,
    Math.max(0, deps.limits.orgBytes - (await store.bytesOf(deps.ctx.db, caller.orgId))),
  )
  const incoming = await open(limit)
  const name = fileNameOf(incoming.name)
  const contentType = mediaTypeOf(incoming.contentType)
  const id = `fil_${randomUUID()}`
  const dataKey = newDataKey()
  const sealed = deps.keys.seal(dataKey, id)
  await store.insertFile(deps.ctx.db, {
    id,
    org_id: caller.orgId,
    engagement_id: engagementId,
    name,
    content_type: contentType,
    state: 'uploading',
    size_bytes: 0,
    chunk_count: 0,
    key_id: sealed.keyId,
    sealed_key: sealed.sealed,
    created_by: caller.actor.id,
    created_at: deps.ctx.now(),
  })
  try {
    const written = await writeChunks(deps, id, dataKey, incoming.body, limit)
    await inTransaction(deps.ctx.db, async (trx) => {
      const used = await store.bytesOf(trx, caller.orgId, true)
      if (used + written.size > deps.limits.orgBytes)
        throw tooLarge(Math.max(0, deps.limits.orgBytes - used), deps)
      await store.markStored(trx, id, {
        size_bytes: written.size,
        sha256: written.sha256,
        chunk_count: written.chunks,
        stored_at: deps.ctx.now(),
      })
      await record(deps, trx, caller, 'file.stored', {
        id,
        engagementId,
        sha256: written.sha256,
        size: written.size,
      })
    })
  } catch (err) {
    await deps.files.remove(id).catch(() => undefined)
    await store.dropUpload(deps.ctx.db, id).catch(() => undefined)
    throw err
  } finally {
    dataKey.fill(0)
  }
  return fileView((await store.fileById(deps.ctx.db, id))!)
}

/** Reads the body, hashing and sealing 64 KiB chunks; the last one (possibly empty) is marked final. */
async function writeChunks(
  deps: FileDeps,
  id: string,
  key: Buffer,
  body: AsyncIterable<Buffer | Uint8Array>,
  limit: number,
) {
  const hash = createHash('sha256')
  let size = 0
  let index = 0
  let pending: Buffer[] = []
  let pendingBytes = 0
  let batch: StoredChunk[] = []
  const emit = async (plain: Buffer, final: boolean) => {
    batch.push({ index, final, data: sealChunk(key, id, index, final, plain) })
    index++
    if (final || batch.length >= WRITE_BATCH) {
      await deps.files.put(id, batch)
      batch = []
    }
  }
  for await (const piece of incomingBytes(body)) {
    size += piece.length
    if (size > limit) throw tooLarge(limit, deps)
    hash.update(piece)
    pending.push(Buffer.from(piece))
    pendingBytes += piece.length
    // a full chunk goes out only once more bytes follow it: the last chunk must be known as final
    while (pendingBytes > CHUNK_BYTES) {
      const all = Buffer.concat(pending)
      await emit(all.subarray(0, CHUNK_BYTES), false)
      pending = [all.subarray(CHUNK_BYTES)]
      pendingBytes = pending[0]!.length
    }
  }
  await emit(Buffer.concat(pending), true)
  return { size, sha256: hash.digest('hex'), chunks: index }
}

/** The request's bytes; a body that breaks off or does not parse is 400 `upload_incomplete`. */
async function* incomingBytes(body: AsyncIterable<Buffer | Uint8Array>) {
  try {
    for await (const piece of body) yield piece
  } catch (err) {
    if (err instanceof AppError) throw err
    const status = (err as { statusCode?: number }).statusCode
    if (status === 413) throw rentalError('payload_too_large', 'the file is larger than allowed')
    throw rentalError('upload_incomplete', 'the upload broke off or its body is malformed: nothing was kept')
  }
}

export async function fileList(deps: FileDeps, orgId: string, engagementId: string, page: Page) {
  if (!(await deps.engagements.engagementOf(orgId, engagementId)))
    throw rentalError('engagement_not_found', `no engagement ${engagementId}`)
  const { rows, total } = await store.filesOf(deps.ctx.db, orgId, engagementId, page.limit, page.offset)
  return { files: rows.map(fileView), total, limit: page.limit, offset: page.offset }
}

/**
 * The file's plaintext as a stream, each chunk given out only after its GCM tag verified. The
 * first chunk is opened before this returns, so a file that fails at once is an error answer
 * (500 `file_corrupted`) rather than a broken body; a later chunk that fails, is missing, out of
 * order or not where the file ends destroys the stream, so the response is cut short (its
 * Content-Length tells the client it is incomplete) and no unverified byte is sent.
 */
export async function download(deps: FileDeps, orgId: string, id: string) {
  const row = await store.storedFile(deps.ctx.db, orgId, id)
  if (!row) throw notFound(id)
  let key: Buffer
  try {
    key = deps.keys.open(row.key_id!, row.sealed_key!, id)
  } catch (err) {
    deps.ctx.log.error({ file_id: id, err: (err as Error).message }, 'a file’s data key does not open')
    throw rentalError('file_corrupted', 'the file cannot be opened')
  }
  const chunks = verifiedChunks(deps, row, key)
  const first = await chunks.next().catch((err: Error) => {
    deps.ctx.log.error({ file_id: id, err: err.message }, 'a stored file failed verification')
    throw rentalError('file_corrupted', 'the file failed its integrity check and is not sent')
  })
  async function* rest() {
    if (!first.done) yield first.value
    try {
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value
    } catch (err) {
      deps.ctx.log.error(
        { file_id: id, err: (err as Error).message },
        'a stored file failed verification mid-stream',
      )
      throw err
    } finally {
      key.fill(0)
    }
  }
  return { row, stream: Readable.from(rest(), { objectMode: false, highWaterMark: CHUNK_BYTES }) }
}

async function* verifiedChunks(deps: FileDeps, row: FileRow, key: Buffer) {
  let expected = 0
  let size = 0
  for await (const chunk of deps.files.read(row.id)) {
    if (chunk.index !== expected) throw new Error(`chunk ${expected} is missing`)
    if (expected >= row.chunk_count) throw new Error('chunks past the file’s end')
    const plain = openChunk(key, row.id, chunk.index, chunk.final, chunk.data)
    size += plain.length
    expected++
    if (chunk.final !== (expected === row.chunk_count)) throw new Error('the final chunk is not the last')
    if (chunk.final && size !== Number(row.size_bytes)) throw new Error('the file’s size does not match')
    yield plain
  }
  if (expected !== row.chunk_count)
    throw new Error(`the file ends after ${expected} of ${row.chunk_count} chunks`)
}

/** Whether a legal hold stands over an engagement's data (the retention area's `files.hold` reaction). */
export type HoldCheck = (
  trx: RentalDb,
  orgId: string,
  engagementId: string,
) => Promise<{ id: string } | undefined>

/**
 * Deletes a stored file: in one transaction with its row locked, the chunks are removed and the
 * sealed data key destroyed (crypto-shredding: a copy of the ciphertext elsewhere, a backup,
 * no longer opens), with the `file.deleted` event and receipt (hash and size only). Under a
 * legal hold over its engagement it is 409 `legal_hold` and nothing changes.
 */
export async function deleteFile(deps: FileDeps, caller: Caller, id: string) {
  await inTransaction(deps.ctx.db, async (trx) => {
    const row = await store.storedFile(trx, caller.orgId, id, true)
    if (!row) throw notFound(id)
    const hold = await deps.hold?.(trx, caller.orgId, row.engagement_id)
    if (hold)
      throw rentalError(
        'legal_hold',
        `the file is under legal hold ${hold.id}: nothing of its engagement is deleted until the hold is released`,
      )
    await shred(deps, trx, caller, row)
  })
}

/**
 * Erasure: each of the organization's files (stored, or an upload left behind) shredded as
 * `deleteFile` does, in the caller's transaction: bytes removed, data key destroyed, a
 * `file.deleted` receipt and event for each stored one.
 */
export async function eraseFilesOf(deps: FileDeps, trx: RentalDb, caller: Caller) {
  let files = 0
  let bytes = 0
  for (const row of await store.liveFilesOf(trx, caller.orgId)) {
    await deps.files.remove(row.id, trx)
    await store.markDeleted(trx, row.id, deps.ctx.now())
    if (row.state !== 'stored') continue
    files++
    bytes += Number(row.size_bytes)
    await record(deps, trx, caller, 'file.deleted', {
      id: row.id,
      engagementId: row.engagement_id,
      sha256: row.sha256!,
      size: Number(row.size_bytes),
    })
  }
  return { files, bytes }
}

/** Crypto-shreds a stored file locked in `trx`: its bytes and data key go, its receipt and event are written. */
async function shred(deps: FileDeps, trx: RentalDb, caller: Caller, row: FileRow, reason?: string) {
  await deps.files.remove(row.id, trx)
  await store.markDeleted(trx, row.id, deps.ctx.now())
  await record(
    deps,
    trx,
    caller,
    'file.deleted',
    { id: row.id, engagementId: row.engagement_id, sha256: row.sha256!, size: Number(row.size_bytes) },
    reason,
  )
}

/**
 * Retention: crypto-shreds, in `trx`, up to `limit` of the organization's files stored before
 * `before`, outside the held engagements, each as DELETE would (receipt and event, reason
 * `retention`); answers their ids.
 */
export async function shredExpired(
  deps: FileDeps,
  trx: RentalDb,
  caller: Caller,
  before: Date,
  skipEngagements: readonly string[],
  limit: number,
) {
  const rows = await store.expiredFiles(trx, caller.orgId, before, skipEngagements, limit)
  for (const row of rows) await shred(deps, trx, caller, row, 'retention')
  return rows.map((r) => r.id)
}

async function record(
  deps: FileDeps,
  trx: RentalDb,
  caller: Caller,
  type: 'file.stored' | 'file.deleted',
  file: { id: string; engagementId: string; sha256: string; size: number },
  reason?: string,
) {
  const data = { sha256: `sha256:${file.sha256}`, size_bytes: file.size }
  const receipt = await deps.ctx.receipts.record(trx, {
    type,
    subject: file.id,
    data: { org_id: caller.orgId, engagement_id: file.engagementId, file_id: file.id, ...data },
  })
  await deps.events.record(trx, {
    orgId: caller.orgId,
    type,
    subjects: { file_id: file.id, engagement_id: file.engagementId },
    actor: caller.actor,
    data: { ...data, receipt_id: receipt.id, ...(reason ? { reason } : {}) },
  })
}

/**
 * After a rotation of RENTAL_ENCRYPTION_KEY: every data key sealed under a retired service key is
 * opened and sealed again under the current one (a few dozen bytes per file; the files' chunks are
 * not touched). Answers how many were moved; keys under an unknown service key are left and counted.
 */
export async function rewrapDataKeys(db: RentalDb, keys: KeyRing, batch = 100) {
  let moved = 0
  let unknown = 0
  const skip = new Set<string>()
  for (;;) {
    const rows = (await store.sealedUnderOther(db, keys.currentId, batch + skip.size)).filter(
      (r) => !skip.has(r.id),
    )
    if (rows.length === 0) return { moved, unknown }
    for (const row of rows) {
      if (!keys.has(row.key_id!)) {
        skip.add(row.id)
        unknown++
        continue
      }
      const dataKey = keys.open(row.key_id!, row.sealed_key!, row.id)
      await store.resealKey(db, row.id, row.key_id!, keys.seal(dataKey, row.id))
      dataKey.fill(0)
      moved++
    }
  }
}
