import type { Generated, Insertable, Selectable } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'

/** The insurance area's tables (migration 0032). */
export interface InsuranceTables {
  insurance_policies: {
    id: string
    org_id: string
    engagement_id: string
    currency: Generated<string>
    coverage_fils: number
    premium_fils: number
    covers: string[]
    starts_at: Date
    ends_at: Date
    state: 'active' | 'ended'
    premium_transfer_id: string
    created_by: string | null
    created_at: Date
  }
  insurance_claims: {
    id: string
    policy_id: string
    org_id: string
    event_type: CoveredEvent
    event_key: string
    evidence: Json
    requested_fils: number
    paid_fils: number
    state: 'paid' | 'refused'
    refuse_reason: string | null
    transfer_id: string | null
    created_by: string | null
    created_at: Date
  }
}

export const COVERED = ['failed_task', 'sla_breach', 'incident'] as const
export type CoveredEvent = (typeof COVERED)[number]
export type PolicyRow = Selectable<InsuranceTables['insurance_policies']>
export type ClaimRow = Selectable<InsuranceTables['insurance_claims']>

export const insertPolicy = (trx: RentalDb, row: Insertable<InsuranceTables['insurance_policies']>) =>
  trx.insertInto('insurance_policies').values(row).execute()

export const insertClaim = (trx: RentalDb, row: Insertable<InsuranceTables['insurance_claims']>) =>
  trx.insertInto('insurance_claims').values(row).execute()

/** The engagement's active policy (`lock`: FOR UPDATE), scoped by the organization. */
export const activePolicyOf = (db: RentalDb, orgId: string, engagementId: string, lock = false) => {
  let query = db
    .selectFrom('insurance_policies')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
    .where('state', '=', 'active')
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** The engagement's latest policy, active or ended. */
export const latestPolicyOf = (db: RentalDb, orgId: string, engagementId: string) =>
  db
    .selectFrom('insurance_policies')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst()

export const endPolicy = (trx: RentalDb, id: string) =>
  trx.updateTable('insurance_policies').set({ state: 'ended' }).where('id', '=', id).execute()

export const claimsOf = (db: RentalDb, policyId: string) =>
  db
    .selectFrom('insurance_claims')
    .selectAll()
    .where('policy_id', '=', policyId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

export const claimById = (db: RentalDb, id: string) =>
  db.selectFrom('insurance_claims').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
