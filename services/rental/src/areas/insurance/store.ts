import { type Generated, type Insertable, type Selectable, sql } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'

/** The insurance area's tables (migrations 0032, 0052). */
export interface InsuranceTables {
  insurance_quotes: {
    id: string
    org_id: string
    engagement_id: string
    currency: Generated<string>
    coverage_fils: number
    premium_fils: number
    covers: string[]
    period_days: number
    basis: Json
    state: 'offered' | 'bought'
    expires_at: Date
    created_by: string | null
    created_at: Date
  }
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
    /** the quote it was bought from (null: a policy from before quotes, migration 0052) */
    quote_id: Generated<string | null>
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
    /** the loss the evidence proves (null: refused before it was measured, or a claim from before 0052) */
    loss_fils: number | null
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
export type QuoteRow = Selectable<InsuranceTables['insurance_quotes']>

export const insertQuote = (trx: RentalDb, row: Insertable<InsuranceTables['insurance_quotes']>) =>
  trx.insertInto('insurance_quotes').values(row).execute()

/** The organization's quote for the engagement (`lock`: FOR UPDATE). */
export const quoteOf = (db: RentalDb, orgId: string, engagementId: string, id: string, lock = false) => {
  let query = db
    .selectFrom('insurance_quotes')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export const markQuoteBought = (trx: RentalDb, id: string) =>
  trx.updateTable('insurance_quotes').set({ state: 'bought' }).where('id', '=', id).execute()

/**
 * What the platform has sold and may still have to pay: the coverage left (coverage − paid claims)
 * of every policy active and not over at `now`, across all organizations.
 */
export async function exposure(db: RentalDb, now: Date) {
  const row = await db
    .selectFrom('insurance_policies as p')
    .select(
      sql<string>`coalesce(sum(p.coverage_fils - coalesce((
        select sum(c.paid_fils) from insurance_claims c where c.policy_id = p.id), 0)), 0)`.as('left'),
    )
    .where('p.state', '=', 'active')
    .where('p.ends_at', '>', now)
    .executeTakeFirstOrThrow()
  return Number(row.left)
}

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
