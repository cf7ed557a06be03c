import { countedPageOfRows, NEWEST_FIRST } from '@svc/kit'
import { type Insertable, type Selectable, sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The files area's tables (migration 0030). */
export interface FileTables {
  rental_files: {
    id: string
    org_id: string
    engagement_id: string
    name: string | null
    content_type: string
    state: FileState
    size_bytes: number
    sha256: string | null
    chunk_count: number
    key_id: string | null
    sealed_key: Buffer | null
    created_by: string | null
    created_at: Date
    stored_at: Date | null
    deleted_at: Date | null
  }
  rental_file_chunks: { file_id: string; idx: number; final: boolean; data: Buffer }
}

export type FileState = 'uploading' | 'stored' | 'deleted'
export type FileRow = Selectable<FileTables['rental_files']>

/** One encrypted chunk as a store keeps it. */
export interface StoredChunk {
  index: number
  final: boolean
  data: Buffer
}

/**
 * Where the encrypted bytes live, apart from the files' rows. PostgreSQL by default
 * (`rental_file_chunks`); an object store (S3-compatible) is the other adapter this seam is for.
 * A store only ever sees ciphertext.
 */
export interface FileStore {
  /** Appends chunks of a file being written, in order. */
  put(fileId: string, chunks: StoredChunk[]): Promise<void>
  /** The file's chunks in index order, read a few at a time. */
  read(fileId: string): AsyncIterable<StoredChunk>
  /** Destroys the file's bytes (in `trx` when the store is the database). */
  remove(fileId: string, trx?: RentalDb): Promise<void>
}

/** Chunks read per query when streaming a file out (4 × 64 KiB: 256 KiB). */
const READ_PAGE = 4

export class PgFileStore implements FileStore {
  constructor(private readonly db: RentalDb) {}

  async put(fileId: string, chunks: StoredChunk[]) {
    if (chunks.length === 0) return
    await this.db
      .insertInto('rental_file_chunks')
      .values(chunks.map((c) => ({ file_id: fileId, idx: c.index, final: c.final, data: c.data })))
      .execute()
  }

  async *read(fileId: string): AsyncIterable<StoredChunk> {
    for (let from = 0; ;) {
      const rows = await this.db
        .selectFrom('rental_file_chunks')
        .select(['idx', 'final', 'data'])
        .where('file_id', '=', fileId)
        .where('idx', '>=', from)
        .orderBy('idx')
        .limit(READ_PAGE)
        .execute()
      for (const row of rows) yield { index: row.idx, final: row.final, data: row.data }
      if (rows.length < READ_PAGE) return
      from = rows[rows.length - 1]!.idx + 1
    }
  }

  async remove(fileId: string, trx?: RentalDb) {
    await (trx ?? this.db).deleteFrom('rental_file_chunks').where('file_id', '=', fileId).execute()
  }
}

export const insertFile = (db: RentalDb, row: Insertable<FileTables['rental_files']>) =>
  db.insertInto('rental_files').values(row).execute()

/** A stored file of the organization (`lock`: FOR UPDATE). Uploading and deleted files are not found. */
export const storedFile = (db: RentalDb, orgId: string, id: string, lock = false) => {
  let query = db
    .selectFrom('rental_files')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .where('state', '=', 'stored')
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** The organization's stored files of the engagement among `ids` (others' and deleted ones are left out). */
export const storedOfEngagement = (db: RentalDb, orgId: string, engagementId: string, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('rental_files')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('engagement_id', '=', engagementId)
        .where('state', '=', 'stored')
        .where('id', 'in', ids)
        .execute()

export const fileById = (db: RentalDb, id: string) =>
  db.selectFrom('rental_files').selectAll().where('id', '=', id).executeTakeFirst()

/** Every stored file of the organization's engagement, oldest first. */
export const filesOfEngagement = (db: RentalDb, orgId: string, engagementId: string) =>
  db
    .selectFrom('rental_files')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
    .where('state', '=', 'stored')
    .orderBy('created_at')
    .orderBy('id')
    .execute()

export async function filesOf(
  db: RentalDb,
  orgId: string,
  engagementId: string,
  limit: number,
  offset: number,
) {
  return countedPageOfRows(
    db,
    {
      table: 'rental_files',
      owner: ['org_id', orgId],
      where: (q) => q.where('engagement_id', '=', engagementId).where('state', '=', 'stored'),
      order: NEWEST_FIRST,
    },
    { limit, offset },
  )
}

/** Bytes the organization keeps (stored files), under a transaction-scoped lock on its quota when `trx` is one. */
export async function bytesOf(db: RentalDb, orgId: string, lock = false): Promise<number> {
  if (lock) await sql`select pg_advisory_xact_lock(hashtextextended(${`files:${orgId}`}, 0))`.execute(db)
  const row = await db
    .selectFrom('rental_files')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size_bytes'), eb.lit(0)).as('total'))
    .where('org_id', '=', orgId)
    .where('state', '=', 'stored')
    .executeTakeFirstOrThrow()
  return Number(row.total)
}

export async function markStored(
  trx: RentalDb,
  id: string,
  done: { size_bytes: number; sha256: string; chunk_count: number; stored_at: Date },
) {
  await trx
    .updateTable('rental_files')
    .set({ ...done, state: 'stored' })
    .where('id', '=', id)
    .where('state', '=', 'uploading')
    .execute()
}

/** Forgets what identifies the file and the key that opens it; the row keeps its id, hash and size. */
export const markDeleted = (trx: RentalDb, id: string, at: Date) =>
  trx
    .updateTable('rental_files')
    .set({ state: 'deleted', name: null, sealed_key: null, key_id: null, deleted_at: at })
    .where('id', '=', id)
    .execute()

/**
 * The organization's stored files kept since before `before` (retention), oldest first, locked
 * (SKIP LOCKED: one a user deletes now is left to the next run), outside `skipEngagements` (held).
 */
export function expiredFiles(
  trx: RentalDb,
  orgId: string,
  before: Date,
  skipEngagements: readonly string[],
  limit: number,
) {
  let query = trx
    .selectFrom('rental_files')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('state', '=', 'stored')
    .where('stored_at', '<', before)
  if (skipEngagements.length) query = query.where('engagement_id', 'not in', skipEngagements)
  return query.orderBy('stored_at').orderBy('id').limit(limit).forUpdate().skipLocked().execute()
}

/** Removes an upload that did not complete (its chunks go with it: on delete cascade). */
export const dropUpload = (db: RentalDb, id: string) =>
  db.deleteFrom('rental_files').where('id', '=', id).where('state', '=', 'uploading').execute()

/** Uploads started before `before` and never completed (an instance stopped mid-upload). */
export const dropStaleUploads = (db: RentalDb, before: Date) =>
  db.deleteFrom('rental_files').where('state', '=', 'uploading').where('created_at', '<', before).execute()

/** Files whose data key is sealed under another service key than `keyId`, a batch at a time. */
export const sealedUnderOther = (db: RentalDb, keyId: string, limit: number) =>
  db
    .selectFrom('rental_files')
    .select(['id', 'key_id', 'sealed_key'])
    .where('sealed_key', 'is not', null)
    .where('key_id', '!=', keyId)
    .orderBy('id')
    .limit(limit)
    .execute()

export const resealKey = (db: RentalDb, id: string, from: string, to: { keyId: string; sealed: Buffer }) =>
  db
    .updateTable('rental_files')
    .set({ key_id: to.keyId, sealed_key: to.sealed })
    .where('id', '=', id)
    .where('key_id', '=', from)
    .execute()

/** The organization's files not yet deleted (erasure), locked FOR UPDATE. */
export const liveFilesOf = (trx: RentalDb, orgId: string) =>
  trx
    .selectFrom('rental_files')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('state', '!=', 'deleted')
    .orderBy('id')
    .forUpdate()
    .execute()
