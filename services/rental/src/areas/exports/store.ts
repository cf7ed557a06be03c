import { type Generated, sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

export type ExportState = 'queued' | 'running' | 'ready' | 'failed' | 'expired'

/** The exports area's table (migration 0050). */
export interface ExportTables {
  tenant_exports: {
    id: string
    org_id: string
    /** The member (or key) that asked for it. */
    requested_by: string
    state: ExportState
    sections_done: Generated<number>
    sections_total: number
    /** The section being gathered now (null before and after). */
    section: string | null
    left_out: Generated<string[]>
    error: string | null
    /** The zip, sealed under the service key with context `tenant-export:<org>:<id>`; null once expired. */
    archive_sealed: Buffer | null
    archive_bytes: number | null
    archive_sha256: string | null
    created_at: Generated<Date>
    completed_at: Date | null
    expires_at: Date | null
  }
}

export type ExportRow = Awaited<ReturnType<typeof exportOf>> & object

const COLUMNS = [
  'id',
  'org_id',
  'requested_by',
  'state',
  'sections_done',
  'sections_total',
  'section',
  'left_out',
  'error',
  'archive_bytes',
  'archive_sha256',
  'created_at',
  'completed_at',
  'expires_at',
] as const

export const insertExport = (
  db: RentalDb,
  row: { id: string; org_id: string; requested_by: string; sections_total: number },
) =>
  db
    .insertInto('tenant_exports')
    .values({ ...row, state: 'queued' })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow()

/** The organization's export (another organization's is not found); without the archive's bytes. */
/** Serialises the organization's export requests until `trx` ends (a transaction-scoped advisory lock). */
export async function lockOrgExports(trx: RentalDb, orgId: string) {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`tenant-exports:${orgId}`}, 0))`.execute(trx)
}

export const exportOf = (db: RentalDb, orgId: string, id: string) =>
  db
    .selectFrom('tenant_exports')
    .select(COLUMNS)
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .executeTakeFirst()

export const exportById = (db: RentalDb, id: string) =>
  db.selectFrom('tenant_exports').select(COLUMNS).where('id', '=', id).executeTakeFirst()

/** The organization's export still queued or running, if any (one at a time). */
export const unfinishedOf = (db: RentalDb, orgId: string) =>
  db
    .selectFrom('tenant_exports')
    .select(['id', 'state', 'created_at'])
    .where('org_id', '=', orgId)
    .where('state', 'in', ['queued', 'running'])
    .executeTakeFirst()

export const exportsOf = (db: RentalDb, orgId: string, limit: number) =>
  db
    .selectFrom('tenant_exports')
    .select(COLUMNS)
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()

export const setProgress = (
  db: RentalDb,
  id: string,
  set: { state?: ExportState; sections_done?: number; section?: string | null; error?: string | null },
) => db.updateTable('tenant_exports').set(set).where('id', '=', id).execute()

export const setReady = (
  db: RentalDb,
  id: string,
  set: {
    archive_sealed: Buffer
    archive_bytes: number
    archive_sha256: string
    completed_at: Date
    expires_at: Date
  },
) =>
  db
    .updateTable('tenant_exports')
    .set({ ...set, state: 'ready', section: null })
    .where('id', '=', id)
    .execute()

/** The sealed archive of a ready, unexpired export of the organization. */
export const sealedArchiveOf = async (db: RentalDb, orgId: string, id: string) =>
  (
    await db
      .selectFrom('tenant_exports')
      .select('archive_sealed')
      .where('id', '=', id)
      .where('org_id', '=', orgId)
      .where('state', '=', 'ready')
      .executeTakeFirst()
  )?.archive_sealed ?? null

/** Erasure: the organization's exports and their archives deleted, in `trx`; how many. */
export const deleteExportsOf = async (db: RentalDb, orgId: string) =>
  Number(
    (await db.deleteFrom('tenant_exports').where('org_id', '=', orgId).executeTakeFirst()).numDeletedRows,
  )

/** Drops the bytes of every archive past its expiry (the rows stay, `expired`): how many. */
export const expireArchives = async (db: RentalDb, now: Date) =>
  (
    await db
      .updateTable('tenant_exports')
      .set({ archive_sealed: null, state: 'expired' })
      .where('archive_sealed', 'is not', null)
      .where('expires_at', '<=', now)
      .executeTakeFirst()
  ).numUpdatedRows
