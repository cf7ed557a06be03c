import { columnsOf } from '@svc/kit'
import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import { lockedBudgetIds } from '../budgets/index.ts'
import { bodyHash, type EscrowBody } from './bodies.ts'
import type { EscrowRow } from './store.ts'

/** The engagement's escrows, oldest first; `lock` takes them FOR UPDATE (in the caller's transaction). */
export const escrowsOf = (db: RentalDb, engagementId: string, lock = false) => {
  const query = db
    .selectFrom('escrows')
    .selectAll()
    .where('engagement_id', '=', engagementId)
    .orderBy('created_at')
    .orderBy('id')
  return (lock ? query.forUpdate() : query).execute()
}

/** The organization's escrows that were opened (each has a rail account `escrow:<id>`). */
export const openedEscrowsOfOrg = (db: RentalDb, orgId: string) =>
  db
    .selectFrom('escrows')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('open_transfer_id', 'is not', null)
    .execute()

export const escrowByHash = (db: RentalDb, engagementId: string, hash: string, lock = false) => {
  let query = db
    .selectFrom('escrows')
    .selectAll()
    .where('engagement_id', '=', engagementId)
    .where('hash', '=', hash)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** The organization's escrow by its id or its task's id (another organization's is not found); `lock` takes it FOR UPDATE. */
/** How a caller names an escrow: its id, its body's hash, or the task it pays for. */
export type EscrowKey = { escrowId: string } | { escrowHash: string } | { taskId: string }

export const escrowOfOrg = (db: RentalDb, orgId: string, by: EscrowKey, lock = false) => {
  let query = db.selectFrom('escrows').selectAll().where('org_id', '=', orgId)
  query =
    'escrowId' in by
      ? query.where('id', '=', by.escrowId)
      : 'escrowHash' in by
        ? query.where('hash', '=', by.escrowHash)
        : query.where('task_id', '=', by.taskId)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export const escrowOfTask = (db: RentalDb, taskId: string) =>
  db.selectFrom('escrows').selectAll().where('task_id', '=', taskId).executeTakeFirst()

/**
 * A new task's escrow in one statement: the engagement's oldest untaken one taken (the package's,
 * by a conditional update of one row under SKIP LOCKED, so two first tasks never both take it), else `body` inserted as a new one, `offered`; with a new one, the budgets
 * its money falls under locked (the budgets area's `lockedBudgetIds`) and counted (`budgets`; 0 for
 * a taken one, whose money was committed at hiring). The insert runs only when nothing was taken.
 */
export async function takeOrMakeEscrow(
  trx: RentalDb,
  orgId: string,
  body: EscrowBody,
): Promise<{ escrow: EscrowRow; made: boolean; budgets: number }> {
  const budgets = lockedBudgetIds(trx, orgId, body.engagement_id, body.payee_did).where(
    sql<boolean>`exists (select 1 from made)`,
  )
  const { rows } = await sql<EscrowRow & { made: boolean; budgets: number }>`
    with taken as (
      update escrows set task_id = ${body.task_id}
      where id = (select id from escrows where engagement_id = ${body.engagement_id} and task_id is null
        order by created_at, id limit 1 for update skip locked)
        and task_id is null
      returning ${columnsOf(trx, 'escrows')}
    ), made as (
      insert into escrows (id, engagement_id, org_id, task_id, amount_fils, body, hash, state)
      select ${body.escrow_id}, ${body.engagement_id}, ${orgId}, ${body.task_id}, ${body.amount_fils},
        ${JSON.stringify(body)}::jsonb, ${bodyHash(body)}, 'offered'
      where not exists (select 1 from taken)
      returning ${columnsOf(trx, 'escrows')}
    ), budgets as (${budgets})
    select ${columnsOf(trx, 'escrows', 'taken')}, false as made, 0 as budgets from taken
    union all
    select ${columnsOf(trx, 'escrows', 'made')}, true as made, (select count(*) from budgets)::int as budgets from made`.execute(
    trx,
  )
  const { made, budgets: locked, ...escrow } = rows[0]!
  return { escrow: escrow as EscrowRow, made, budgets: Number(locked) }
}

/** The escrows of several tasks in one query (a task has at most one). */
export const escrowsOfTasks = (db: RentalDb, taskIds: string[]) =>
  taskIds.length === 0
    ? Promise.resolve([])
    : db.selectFrom('escrows').selectAll().where('task_id', 'in', taskIds).execute()

export async function insertEscrow(trx: RentalDb, orgId: string, body: EscrowBody) {
  return trx
    .insertInto('escrows')
    .values({
      id: body.escrow_id,
      engagement_id: body.engagement_id,
      org_id: orgId,
      task_id: body.task_id,
      amount_fils: body.amount_fils,
      body: JSON.stringify(body),
      hash: bodyHash(body),
      state: 'offered',
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function openEscrow(
  trx: RentalDb,
  id: string,
  opened: { signature: string; transferId: string; at: Date },
) {
  await trx
    .updateTable('escrows')
    .set({
      state: 'open',
      signature: opened.signature,
      open_transfer_id: opened.transferId,
      opened_at: opened.at,
    })
    .where('id', '=', id)
    .execute()
}

export async function markReleased(
  trx: RentalDb,
  id: string,
  released: {
    feeFils: number
    vatFils: number
    instruction: unknown
    signature: string
    transferId: string
    receiptId: string
    answer: unknown
    at: Date
  },
) {
  await trx
    .updateTable('escrows')
    .set({
      state: 'released',
      fee_fils: released.feeFils,
      vat_fils: released.vatFils,
      release_instruction: JSON.stringify(released.instruction),
      release_signature: released.signature,
      release_transfer_id: released.transferId,
      release_receipt_id: released.receiptId,
      release_answer: JSON.stringify(released.answer),
      released_at: released.at,
    })
    .where('id', '=', id)
    .execute()
}

/** The client's released escrows with the agent that carry a receipt. */
export const releasesWith = (db: RentalDb, orgId: string, did: string) =>
  db
    .selectFrom('escrows')
    .innerJoin('engagements', 'engagements.id', 'escrows.engagement_id')
    .select(['escrows.id', 'escrows.task_id', 'escrows.release_receipt_id'])
    .where('escrows.org_id', '=', orgId)
    .where('engagements.org_id', '=', orgId)
    .where('engagements.agent_did', '=', did)
    .where('escrows.release_receipt_id', 'is not', null)
    .execute()

/**
 * The organization's released escrows for invoicing: of one engagement, or released in
 * [from, to); with the engagement's job and agent. Oldest first.
 */
export const releasedEscrows = (
  db: RentalDb,
  orgId: string,
  scope: { engagementId: string } | { from: Date; to: Date },
) => {
  let query = db
    .selectFrom('escrows')
    .innerJoin('engagements', 'engagements.id', 'escrows.engagement_id')
    .select([
      'escrows.id',
      'escrows.engagement_id',
      'escrows.task_id',
      'escrows.amount_fils',
      'escrows.fee_fils',
      'escrows.vat_fils',
      'escrows.currency',
      'escrows.released_at',
      'escrows.release_transfer_id',
      'engagements.job_id',
      'engagements.agent_did',
    ])
    .where('escrows.org_id', '=', orgId)
    .where('engagements.org_id', '=', orgId)
    .where('escrows.state', '=', 'released')
  query =
    'engagementId' in scope
      ? query.where('escrows.engagement_id', '=', scope.engagementId)
      : query.where('escrows.released_at', '>=', scope.from).where('escrows.released_at', '<', scope.to)
  return query.orderBy('escrows.released_at').orderBy('escrows.id').execute()
}
