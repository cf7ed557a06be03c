import { countedPageOfRows, NEWEST_FIRST } from '@svc/kit'
import type { Insertable, Selectable, Updateable } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'

/** The refunds area's table (migration 0025; what the approval signed and issued: 0029). */
export interface RefundTables {
  refunds: {
    id: string
    org_id: string
    escrow_id: string
    engagement_id: string
    task_id: string | null
    agent_did: string
    currency: string
    requested_fils: number
    amount_fils: number
    state: RefundState
    reason: string
    reject_reason: string | null
    fee_part_fils: number | null
    transfer_id: string | null
    receipt_id: string | null
    requested_by: string | null
    body: Json | null
    body_hash: string | null
    provider_signature: string | null
    receipt_leaf_hash: string | null
    credit_note_id: string | null
    credit_note_number: string | null
    created_at: Date
    updated_at: Date
  }
}

export type RefundState = 'requested' | 'accepted' | 'settled' | 'rejected'
export type RefundRow = Selectable<RefundTables['refunds']>

export const insertRefund = (trx: RentalDb, row: Insertable<RefundTables['refunds']>) =>
  trx.insertInto('refunds').values(row).execute()

/** What the escrow's refunds take from it: requested, accepted and settled ones (not rejected). */
export async function committedOf(trx: RentalDb, escrowId: string): Promise<number> {
  const row = await trx
    .selectFrom('refunds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount_fils'), eb.lit(0)).as('total'))
    .where('escrow_id', '=', escrowId)
    .where('state', '!=', 'rejected')
    .executeTakeFirstOrThrow()
  return Number(row.total)
}

/** The sum of the escrow's settled refunds. */
export async function settledOf(trx: RentalDb, escrowId: string): Promise<number> {
  const row = await trx
    .selectFrom('refunds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount_fils'), eb.lit(0)).as('total'))
    .where('escrow_id', '=', escrowId)
    .where('state', '=', 'settled')
    .executeTakeFirstOrThrow()
  return Number(row.total)
}

/** A refund by id alone; `lock` takes it FOR UPDATE (the caller checks who may see it). */
export const refundById = (db: RentalDb, id: string, lock = false) => {
  let query = db.selectFrom('refunds').selectAll().where('id', '=', id)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export const refundsOfEngagement = (db: RentalDb, orgId: string, engagementId: string) =>
  db
    .selectFrom('refunds')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

export const refundsOf = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  countedPageOfRows(
    db,
    { table: 'refunds', owner: ['org_id', orgId], order: NEWEST_FIRST },
    { limit, offset },
  )

/** Moves the refund only from the state it was read in (the row is locked too): false when it had moved. */
export async function moveRefund(
  trx: RentalDb,
  id: string,
  from: RefundState[],
  change: Omit<Updateable<RefundTables['refunds']>, 'id' | 'org_id' | 'escrow_id'> & {
    state: RefundState
    updated_at: Date
  },
) {
  const result = await trx
    .updateTable('refunds')
    .set(change)
    .where('id', '=', id)
    .where('state', 'in', from)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** The settled refunds whose reversal transfers these are (statements). */
export const settledByTransfers = (db: RentalDb, transferIds: string[]) =>
  transferIds.length === 0
    ? Promise.resolve([] as RefundRow[])
    : db
        .selectFrom('refunds')
        .selectAll()
        .where('transfer_id', 'in', transferIds)
        .where('state', '=', 'settled')
        .execute()
