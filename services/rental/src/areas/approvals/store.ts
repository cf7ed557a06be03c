import { countedPageOfRows, type OwnedRows, rowById } from '@svc/kit'
import type { Insertable, Selectable } from 'kysely'
import type { RentalDb, RentalTables } from '../../db.ts'

export type ApprovalState = 'pending' | 'approved' | 'rejected' | 'expired' | 'canceled'

/** The approvals area's table: each decision a task waits on (the policy's, or the agent's question). */
export interface ApprovalTables {
  approvals: {
    id: string
    org_id: string
    task_id: string
    engagement_id: string
    kind: 'policy' | 'agent_input' | 'tool_call'
    state: ApprovalState
    price_fils: number
    text_sha256: string
    text_preview: string
    question: string | null
    agent_state: 'input-required' | 'auth-required' | null
    agent_task_id: string | null
    agent_context_id: string | null
    requested_by_type: string
    requested_by_id: string | null
    requested_at: Date
    expires_at: Date
    decided_by: string | null
    decided_at: Date | null
    note: string | null
    receipt_id: string | null
    receipt_leaf_hash: string | null
    /** tool_call: the connect action it holds (migration 0045) */
    action_id: string | null
  }
}

export type ApprovalRow = Selectable<RentalTables['approvals']>

export async function insertApproval(trx: RentalDb, row: Insertable<RentalTables['approvals']>) {
  await trx.insertInto('approvals').values(row).execute()
}

/** The organization's approval (another organization's is not found); `lock` takes it FOR UPDATE. */
export const approvalOf = (db: RentalDb, orgId: string, id: string, lock = false) =>
  rowById(db, 'approvals', id, { match: { org_id: orgId }, lock })

export const approvalById = (db: RentalDb, id: string, lock = false) => rowById(db, 'approvals', id, { lock })

/** The task's pending approval, locked. */
export const pendingOfTask = (trx: RentalDb, taskId: string) =>
  trx
    .selectFrom('approvals')
    .selectAll()
    .where('task_id', '=', taskId)
    .where('state', '=', 'pending')
    // a held tool call does not hold its task (the connect area settles it)
    .where('kind', '<>', 'tool_call')
    .forUpdate()
    .executeTakeFirst()

type ApprovalsQuery = Parameters<NonNullable<OwnedRows<RentalTables, 'approvals'>['where']>>[0]

/**
 * A state filter as readers see it: a pending approval past its `expires_at` is already expired,
 * whether or not the expiry job has run.
 */
function filtered(query: ApprovalsQuery, state: ApprovalState | undefined, now: Date) {
  if (state === 'pending') query = query.where('state', '=', 'pending').where('expires_at', '>', now)
  else if (state === 'expired')
    query = query.where((eb) =>
      eb.or([
        eb('state', '=', 'expired'),
        eb.and([eb('state', '=', 'pending'), eb('expires_at', '<=', now)]),
      ]),
    )
  else if (state) query = query.where('state', '=', state)
  return query
}

/** A page of the organization's approvals, newest first, and the total. */
export async function approvalsOf(
  db: RentalDb,
  orgId: string,
  filter: { state?: ApprovalState | undefined; limit: number; offset: number },
  now: Date,
) {
  return countedPageOfRows(
    db,
    {
      table: 'approvals',
      owner: ['org_id', orgId],
      where: (q) => filtered(q, filter.state, now),
      order: [
        ['requested_at', 'desc'],
        ['id', 'desc'],
      ],
    },
    filter,
  )
}

/** Settles a pending approval (one conditional update: of two deciders one wins); undefined when it was not pending. */
export const settle = (
  trx: RentalDb,
  id: string,
  decision: {
    state: Exclude<ApprovalState, 'pending'>
    decided_by: string | null
    decided_at: Date
    note: string | null
  },
) =>
  trx
    .updateTable('approvals')
    .set(decision)
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .returningAll()
    .executeTakeFirst()

export async function setReceipt(trx: RentalDb, id: string, receipt: { id: string; leafHash: string }) {
  await trx
    .updateTable('approvals')
    .set({ receipt_id: receipt.id, receipt_leaf_hash: receipt.leafHash })
    .where('id', '=', id)
    .execute()
}
