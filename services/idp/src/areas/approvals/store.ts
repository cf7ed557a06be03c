import type { Generated } from 'kysely'
import type { Selectable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the approvals area. */
export interface ApprovalsTables {
  approvals: {
    id: string
    client_id: string
    user_id: string
    action: string
    detail: Record<string, unknown> | null
    status: Generated<'pending' | 'approved' | 'denied' | 'expired'>
    created_at: Generated<Date>
    expires_at: Date
    decided_at: Date | null
    last_polled_at: Date | null
    receipt: string | null
  }
}

export type ApprovalRow = Selectable<IdpTables['approvals']>
type Outcome = 'approved' | 'denied' | 'expired'

export async function insertApproval(
  db: IdpDb,
  row: Pick<ApprovalRow, 'id' | 'client_id' | 'user_id' | 'action' | 'detail' | 'expires_at'>,
) {
  await db
    .insertInto('approvals')
    .values({ ...row, detail: row.detail === null ? null : (JSON.stringify(row.detail) as never) })
    .execute()
}

export async function approvalById(db: IdpDb, id: string) {
  return db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst()
}

/**
 * Settles a pending approval, once: an answer only before its deadline, expiry only after it.
 * Undefined when it was settled already, or the time is not right for this outcome.
 */
export async function settle(db: IdpDb, id: string, outcome: Outcome, userId?: string) {
  const now = new Date()
  let update = db
    .updateTable('approvals')
    .set({ status: outcome, decided_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('expires_at', outcome === 'expired' ? '<=' : '>', now)
  if (userId) update = update.where('user_id', '=', userId)
  return update.returningAll().executeTakeFirst()
}

export async function setReceipt(db: IdpDb, id: string, receipt: string) {
  await db.updateTable('approvals').set({ receipt }).where('id', '=', id).execute()
}

/** Records this poll and returns when the one before it was, for the client that owns the approval. */
export async function recordPoll(db: IdpDb, id: string, clientId: string) {
  const row = await db
    .selectFrom('approvals')
    .selectAll()
    .where('id', '=', id)
    .where('client_id', '=', clientId)
    .forUpdate()
    .executeTakeFirst()
  if (row)
    await db.updateTable('approvals').set({ last_polled_at: new Date() }).where('id', '=', id).execute()
  return row
}

/** The user's approvals still waiting for an answer, oldest first, with the asking client's name. */
export async function pendingOf(db: IdpDb, userId: string) {
  return db
    .selectFrom('approvals')
    .innerJoin('clients', 'clients.client_id', 'approvals.client_id')
    .selectAll('approvals')
    .select('clients.client_name')
    .where('approvals.user_id', '=', userId)
    .where('approvals.status', '=', 'pending')
    .where('approvals.expires_at', '>', new Date())
    .orderBy('approvals.created_at')
    .execute()
}

/** The user's latest approvals, answered or not, with the asking client's name (the evidence page). */
export async function approvalsOf(db: IdpDb, userId: string) {
  return db
    .selectFrom('approvals')
    .innerJoin('clients', 'clients.client_id', 'approvals.client_id')
    .select([
      'clients.client_name',
      'approvals.action',
      'approvals.status',
      'approvals.receipt',
      'approvals.created_at',
    ])
    .where('approvals.user_id', '=', userId)
    .orderBy('approvals.created_at', 'desc')
    .limit(20)
    .execute()
}
