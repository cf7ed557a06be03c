import { NEWEST_FIRST, pageOfRows, rowById } from '@svc/kit'
import { type Generated, type Selectable, sql } from 'kysely'
import type { RentalDb, RentalTables } from '../../db.ts'
import type { Actor } from '../events/index.ts'

export type BatchState = 'running' | 'completed' | 'completed_with_errors' | 'canceled'
export type ItemState = 'queued' | 'running' | 'completed' | 'failed' | 'canceled'
export const ITEM_STATES: readonly ItemState[] = ['queued', 'running', 'completed', 'failed', 'canceled']

/** The batches area's tables: each batch, and its items (one task each, linked in the task's transaction). */
export interface BatchTables {
  rental_batches: {
    id: string
    org_id: string
    engagement_id: string
    name: string | null
    concurrency: number
    total: number
    state: BatchState
    reported: Generated<number>
    created_by_type: Actor['type']
    created_by_id: string | null
    created_at: Generated<Date>
    started_at: Date | null
    finished_at: Date | null
  }
  rental_batch_items: {
    batch_id: string
    idx: number
    /** The item's text until its task is made (or it fails without one); then null. */
    text: string | null
    state: Generated<ItemState>
    task_id: string | null
    error: string | null
    started_at: Date | null
    finished_at: Date | null
  }
}

export type BatchRow = Selectable<RentalTables['rental_batches']>
export type ItemRow = Selectable<RentalTables['rental_batch_items']>

export async function insertBatch(
  trx: RentalDb,
  batch: Omit<BatchRow, 'reported' | 'created_at' | 'finished_at'>,
  texts: string[],
) {
  await trx.insertInto('rental_batches').values(batch).execute()
  // 1000 items × 3 parameters: one statement, far below PostgreSQL's 65535 parameters
  await trx
    .insertInto('rental_batch_items')
    .values(texts.map((text, idx) => ({ batch_id: batch.id, idx, text })))
    .execute()
}

/** The organization's batch (another organization's is not found either). */
export const batchOf = (db: RentalDb, orgId: string, id: string) =>
  rowById(db, 'rental_batches', id, { match: { org_id: orgId } })

export const batchById = (db: RentalDb, id: string, lock = false) =>
  rowById(db, 'rental_batches', id, { lock })

export const batchesOf = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  pageOfRows(
    db,
    { table: 'rental_batches', owner: ['org_id', orgId], order: NEWEST_FIRST },
    { limit, offset },
  )

/** The number of items in each state, per batch. */
export async function countsOf(db: RentalDb, ids: string[]) {
  const counts = new Map<string, Record<ItemState, number>>()
  for (const id of ids) counts.set(id, { queued: 0, running: 0, completed: 0, failed: 0, canceled: 0 })
  if (ids.length === 0) return counts
  const rows = await db
    .selectFrom('rental_batch_items')
    .select(['batch_id', 'state', sql<number>`count(*)::int`.as('n')])
    .where('batch_id', 'in', ids)
    .groupBy(['batch_id', 'state'])
    .execute()
  for (const row of rows) counts.get(row.batch_id)![row.state] = Number(row.n)
  return counts
}

export const itemsInState = (db: RentalDb, batchId: string, state: ItemState, limit: number) =>
  db
    .selectFrom('rental_batch_items')
    .selectAll()
    .where('batch_id', '=', batchId)
    .where('state', '=', state)
    .orderBy('idx')
    .limit(limit)
    .execute()

/** A page of the batch's items by index. */
export const itemPage = (db: RentalDb, batchId: string, fromIdx: number, limit: number) =>
  db
    .selectFrom('rental_batch_items')
    .selectAll()
    .where('batch_id', '=', batchId)
    .where('idx', '>=', fromIdx)
    .orderBy('idx')
    .limit(limit)
    .execute()

/**
 * Claims a queued item for its new task, in the task's transaction: only a queued item, and only
 * while fewer than the batch's concurrency run (the batch row is locked: claims are serialised).
 */
export async function claimItem(trx: RentalDb, batchId: string, idx: number, taskId: string, at: Date) {
  const batch = await batchById(trx, batchId, true)
  if (!batch || batch.state !== 'running') return false
  const { n } = await trx
    .selectFrom('rental_batch_items')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('batch_id', '=', batchId)
    .where('state', '=', 'running')
    .executeTakeFirstOrThrow()
  if (Number(n) >= batch.concurrency) return false
  const claimed = await trx
    .updateTable('rental_batch_items')
    .set({ state: 'running', task_id: taskId, text: null, started_at: at })
    .where('batch_id', '=', batchId)
    .where('idx', '=', idx)
    .where('state', '=', 'queued')
    .returning('idx')
    .executeTakeFirst()
  if (claimed && !batch.started_at)
    await trx.updateTable('rental_batches').set({ started_at: at }).where('id', '=', batchId).execute()
  return claimed !== undefined
}

/** Ends an item (conditionally on its state): answers whether this call ended it. */
export async function endItem(
  trx: RentalDb,
  batchId: string,
  idx: number,
  from: ItemState,
  to: { state: ItemState; error?: string | null; at: Date },
) {
  const ended = await trx
    .updateTable('rental_batch_items')
    .set({ state: to.state, error: to.error ?? null, text: null, finished_at: to.at })
    .where('batch_id', '=', batchId)
    .where('idx', '=', idx)
    .where('state', '=', from)
    .returning('idx')
    .executeTakeFirst()
  return ended !== undefined
}

export const setReported = (trx: RentalDb, batchId: string, reported: number) =>
  trx.updateTable('rental_batches').set({ reported }).where('id', '=', batchId).execute()

export const finishBatch = (trx: RentalDb, batchId: string, state: BatchState, at: Date) =>
  trx
    .updateTable('rental_batches')
    .set({ state, finished_at: at })
    .where('id', '=', batchId)
    .where('state', '=', 'running')
    .returning('id')
    .executeTakeFirst()

/** The batches still running (on start: each gets its tick again). */
export const runningBatchIds = async (db: RentalDb) =>
  (await db.selectFrom('rental_batches').select('id').where('state', '=', 'running').execute()).map(
    (r) => r.id,
  )
