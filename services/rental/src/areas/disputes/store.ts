import type { Generated, Insertable, Selectable } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'

/** The disputes area's tables (migration 0032). */
export interface DisputeTables {
  disputes: {
    id: string
    org_id: string
    engagement_id: string
    task_id: string | null
    agent_did: string
    currency: Generated<string>
    amount_fils: number
    reason: string
    evidence: Json
    state: DisputeState
    response: string | null
    response_evidence: Json | null
    outcome: Outcome | null
    client_fils: number | null
    provider_fils: number | null
    resolution: Json | null
    resolution_signature: string | null
    settlement: Json | null
    receipt_id: string | null
    opened_by: string | null
    created_at: Date
    updated_at: Date
  }
  dispute_escrows: {
    dispute_id: string
    escrow_id: string
    position: number
  }
}

export type DisputeState = 'open' | 'responded' | 'resolved' | 'withdrawn'
export type Outcome = 'client' | 'provider' | 'split'
export type DisputeRow = Selectable<DisputeTables['disputes']>
export const LIVE: DisputeState[] = ['open', 'responded']

export async function insertDispute(
  trx: RentalDb,
  row: Insertable<DisputeTables['disputes']>,
  escrowIds: string[],
) {
  await trx.insertInto('disputes').values(row).execute()
  await trx
    .insertInto('dispute_escrows')
    .values(escrowIds.map((escrow_id, position) => ({ dispute_id: row.id, escrow_id, position })))
    .execute()
}

/** A dispute by id alone; `lock` takes it FOR UPDATE (the caller checks who may see it). */
export const disputeById = (db: RentalDb, id: string, lock = false) => {
  let query = db.selectFrom('disputes').selectAll().where('id', '=', id)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** The escrow ids a dispute covers, in settling order. */
export const escrowIdsOf = async (db: RentalDb, disputeId: string) =>
  (
    await db
      .selectFrom('dispute_escrows')
      .select('escrow_id')
      .where('dispute_id', '=', disputeId)
      .orderBy('position')
      .execute()
  ).map((r) => r.escrow_id)

/** The open (or responded) dispute covering any of these escrows, if one is. */
export const liveDisputeOn = async (db: RentalDb, escrowIds: string[]) => disputeOn(db, escrowIds, LIVE)

/** A dispute in one of `states` that covers one of these escrows, if any. */
export const disputeOn = async (db: RentalDb, escrowIds: string[], states: DisputeState[]) =>
  escrowIds.length === 0
    ? undefined
    : db
        .selectFrom('dispute_escrows')
        .innerJoin('disputes', 'disputes.id', 'dispute_escrows.dispute_id')
        .select(['disputes.id', 'disputes.state', 'dispute_escrows.escrow_id'])
        .where('dispute_escrows.escrow_id', 'in', escrowIds)
        .where('disputes.state', 'in', states)
        .executeTakeFirst()

/** The disputes an organization opened, or (as a provider) those about its agents; newest first. */
export async function disputesOf(
  db: RentalDb,
  scope: { orgId: string; agentDids: string[]; all: boolean },
  limit: number,
  offset: number,
) {
  const base = db
    .selectFrom('disputes')
    .where((eb) =>
      scope.all
        ? eb.lit(true)
        : eb.or([
            eb('org_id', '=', scope.orgId),
            ...(scope.agentDids.length ? [eb('agent_did', 'in', scope.agentDids)] : []),
          ]),
    )
  const rows = await base
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()
  const count = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return { rows, total: Number(count.n) }
}

/** The organization's disputes about one engagement, oldest first, each with its escrow ids. */
export async function disputesOfEngagement(db: RentalDb, orgId: string, engagementId: string) {
  const rows = await db
    .selectFrom('disputes')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  const links =
    rows.length === 0
      ? []
      : await db
          .selectFrom('dispute_escrows')
          .selectAll()
          .where(
            'dispute_id',
            'in',
            rows.map((r) => r.id),
          )
          .orderBy('position')
          .execute()
  return rows.map((row) => ({
    row,
    escrowIds: links.filter((l) => l.dispute_id === row.id).map((l) => l.escrow_id),
  }))
}

/** Moves the dispute only from the states it may move from: false when it had moved. */
export async function moveDispute(
  trx: RentalDb,
  id: string,
  from: DisputeState[],
  change: Partial<Omit<DisputeRow, 'id' | 'org_id'>> & { state: DisputeState; updated_at: Date },
) {
  const result = await trx
    .updateTable('disputes')
    .set(change as never)
    .where('id', '=', id)
    .where('state', 'in', from)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** The organization's live disputes' ids, oldest first. */
export const liveDisputesOf = async (db: RentalDb, orgId: string) =>
  (
    await db
      .selectFrom('disputes')
      .select('id')
      .where('org_id', '=', orgId)
      .where('state', 'in', LIVE)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
  ).map((r) => r.id)

/**
 * Erasure: the reasons of the organization's disputes replaced by `[erased]` (none is live: erasure
 * refuses then). The provider's response and the signed resolution (amounts and hashes, no text) stay.
 */
export async function eraseReasonsOf(trx: RentalDb, orgId: string) {
  const result = await trx
    .updateTable('disputes')
    .set({ reason: '[erased]' })
    .where('org_id', '=', orgId)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}
