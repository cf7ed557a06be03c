import type { Generated, Insertable } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The events area's anchoring tables (migration 0048). */
export interface AnchorTables {
  rental_audit_anchors: {
    org_id: string
    pos: string
    hash: string
    receipt_id: string
    anchored_at: Generated<Date>
  }
  rental_audit_anchor_run: { id: number; job_id: string | null; last_run_at: Date | null }
}

export interface Anchor {
  pos: number
  hash: string
  receipt_id: string
  anchored_at: string
}

/** The organizations' chain heads that moved past their last anchor, at most `limit`, by organization. */
export const unanchoredHeads = (db: RentalDb, limit: number) =>
  db
    .selectFrom('rental_audit_chains as c')
    .select(['c.org_id', 'c.last_pos', 'c.last_hash'])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('rental_audit_anchors as a')
            .select('a.pos')
            .whereRef('a.org_id', '=', 'c.org_id')
            .whereRef('a.pos', '>=', 'c.last_pos'),
        ),
      ),
    )
    .orderBy('c.org_id')
    .limit(limit)
    .execute()

export const insertAnchor = (trx: RentalDb, anchor: Insertable<AnchorTables['rental_audit_anchors']>) =>
  trx.insertInto('rental_audit_anchors').values(anchor).execute()

/** The organization's latest anchor (null: none yet). */
export async function latestAnchor(db: RentalDb, orgId: string): Promise<Anchor | null> {
  const row = await db
    .selectFrom('rental_audit_anchors')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('pos', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row
    ? {
        pos: Number(row.pos),
        hash: row.hash,
        receipt_id: row.receipt_id,
        anchored_at: row.anchored_at.toISOString(),
      }
    : null
}

/** The stored link at a place of the organization's chain (null: no entry there). */
export async function linkAt(db: RentalDb, orgId: string, pos: number): Promise<string | null> {
  const row = await db
    .selectFrom('rental_events')
    .select('chain_hash')
    .where('org_id', '=', orgId)
    .where('chain_pos', '=', String(pos))
    .executeTakeFirst()
  return row?.chain_hash ?? null
}

/** The job of the pending anchoring run (null: none). */
export const pendingAnchorJob = async (db: RentalDb) =>
  (await db.selectFrom('rental_audit_anchor_run').select('job_id').where('id', '=', 1).executeTakeFirst())
    ?.job_id ?? null

/** The anchoring run's row locked in `trx`: the job it names. */
export const lockAnchorRun = async (trx: RentalDb) =>
  (
    await trx
      .selectFrom('rental_audit_anchor_run')
      .select('job_id')
      .where('id', '=', 1)
      .forUpdate()
      .executeTakeFirstOrThrow()
  ).job_id

/** Names the next run's job (and, after a run, when it ran). */
export const setAnchorRun = (trx: RentalDb, jobId: string, lastRunAt: Date | undefined) =>
  trx
    .updateTable('rental_audit_anchor_run')
    .set({ job_id: jobId, ...(lastRunAt ? { last_run_at: lastRunAt } : {}) })
    .where('id', '=', 1)
    .execute()
