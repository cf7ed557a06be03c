import { randomUUID } from 'node:crypto'
import { type MoneyLocale, money } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { EngagementService } from '../engagements/index.ts'
import { engagementEvent, engagementNotFound, walletOf } from '../engagements/service.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { TaskService } from '../tasks/index.ts'
import * as store from './store.ts'
import type { ClaimRow, CoveredEvent, PolicyRow } from './store.ts'

export interface InsuranceDeps {
  ctx: Pick<RentalContext, 'db' | 'rail' | 'now'>
  engagements: EngagementService
  events: EventService
  tasks: TaskService
}

/** The platform's insurance pool (premiums in, claims out) and the reserve behind it (outside money). */
export const POOL = 'platform:insurance'
export const RESERVE = 'external:insurance_reserve'
const MAX_PERIOD_MS = 366 * 86_400_000

export function claimView(row: ClaimRow, locale: MoneyLocale) {
  return {
    id: row.id,
    type: row.event_type,
    state: row.state,
    evidence: row.evidence as Record<string, string>,
    requested: money(Number(row.requested_fils), 'AED', locale),
    paid: money(Number(row.paid_fils), 'AED', locale),
    refuse_reason: row.refuse_reason,
    transfer_id: row.transfer_id,
    created_at: row.created_at.toISOString(),
  }
}

export async function policyView(deps: InsuranceDeps, db: RentalDb, row: PolicyRow, locale: MoneyLocale) {
  const claims = await store.claimsOf(db, row.id)
  const paid = claims.reduce((sum, c) => sum + Number(c.paid_fils), 0)
  const m = (fils: number) => money(fils, row.currency, locale)
  const now = deps.ctx.now()
  return {
    id: row.id,
    engagement_id: row.engagement_id,
    state: row.state === 'active' && row.ends_at <= now ? ('ended' as const) : row.state,
    coverage: m(Number(row.coverage_fils)),
    premium: m(Number(row.premium_fils)),
    remaining: m(Number(row.coverage_fils) - paid),
    covers: row.covers as CoveredEvent[],
    starts_at: row.starts_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    premium_transfer_id: row.premium_transfer_id,
    claims: claims.map((c) => claimView(c, locale)),
    created_at: row.created_at.toISOString(),
  }
}

export interface PolicyInput {
  coverage_fils: number
  premium_fils: number
  covers: CoveredEvent[]
  starts_at?: string | undefined
  ends_at: string
}

/**
 * A policy starts on the client's active engagement: one active per engagement (an active one
 * whose period is over is ended first), the premium charged in the same transaction as a balanced
 * transfer wallet → platform:insurance (key `insurance-premium:<policy>`); 402 when the wallet lacks it.
 */
export async function startPolicy(
  deps: InsuranceDeps,
  orgId: string,
  engagementId: string,
  input: PolicyInput,
  actor: Actor,
) {
  // tenancy first: another organization's engagement is 404 whatever the body says
  if (!(await deps.engagements.engagementOf(orgId, engagementId))) throw engagementNotFound(engagementId)
  const now = deps.ctx.now()
  const startsAt = input.starts_at === undefined ? now : new Date(input.starts_at)
  const endsAt = new Date(input.ends_at)
  if (Number.isNaN(startsAt.getTime()) || Number.isNaN(endsAt.getTime()))
    throw rentalError('invalid_request', 'body: starts_at and ends_at are date-times')
  if (endsAt <= startsAt || endsAt <= now || endsAt.getTime() - startsAt.getTime() > MAX_PERIOD_MS)
    throw rentalError(
      'invalid_request',
      'body: the period ends after it starts and after now, within 366 days',
    )
  if (input.premium_fils > input.coverage_fils)
    throw rentalError('invalid_request', 'body.premium_fils: at most the coverage')
  const id = `pol_${randomUUID()}`
  await inTransaction(deps.ctx.db, async (trx) => {
    const engagement = await deps.engagements.engagementOf(orgId, engagementId, { trx, lock: true })
    if (!engagement) throw engagementNotFound(engagementId)
    if (engagement.state !== 'active')
      throw rentalError('engagement_not_active', `the engagement is ${engagement.state}: sign its SLA first`)
    const current = await store.activePolicyOf(trx, orgId, engagementId, true)
    if (current && current.ends_at > now)
      throw rentalError(
        'policy_active',
        `the engagement has the active policy ${current.id} until ${current.ends_at.toISOString()}`,
      )
    if (current) await store.endPolicy(trx, current.id)
    let transferId: string
    try {
      transferId = (
        await deps.ctx.rail.transfer(trx, {
          idempotencyKey: `insurance-premium:${id}`,
          kind: 'insurance_premium',
          postings: [
            { account: walletOf(orgId), amount: -input.premium_fils },
            { account: POOL, amount: input.premium_fils },
          ],
          memo: { policy_id: id, engagement_id: engagementId },
        })
      ).id
    } catch (err) {
      if ((err as { code?: string }).code === 'insufficient_funds')
        throw rentalError(
          'premium_unpaid',
          `the wallet holds less than the premium of ${input.premium_fils} fils`,
        )
      throw err
    }
    await store.insertPolicy(trx, {
      id,
      org_id: orgId,
      engagement_id: engagementId,
      coverage_fils: input.coverage_fils,
      premium_fils: input.premium_fils,
      covers: [...new Set(input.covers)],
      starts_at: startsAt,
      ends_at: endsAt,
      state: 'active',
      premium_transfer_id: transferId,
      created_by: actor.id,
      created_at: now,
    })
    await engagementEvent(
      deps.events,
      trx,
      orgId,
      engagementId,
      actor,
      'insurance.policy_started',
      {
        coverage_fils: input.coverage_fils,
        premium_fils: input.premium_fils,
        covers: input.covers,
        starts_at: startsAt.toISOString(),
        ends_at: endsAt.toISOString(),
        transfer_id: transferId,
      },
      { policy_id: id },
    )
  })
  return policyOf(deps, orgId, engagementId, 'en')
}

/** The engagement's policy (its latest) with its claims; 404 when it has none. */
export async function policyOf(
  deps: InsuranceDeps,
  orgId: string,
  engagementId: string,
  locale: MoneyLocale,
) {
  if (!(await deps.engagements.engagementOf(orgId, engagementId))) throw engagementNotFound(engagementId)
  const row = await store.latestPolicyOf(deps.ctx.db, orgId, engagementId)
  if (!row) throw rentalError('policy_not_found', `engagement ${engagementId} has no insurance policy`)
  return policyView(deps, deps.ctx.db, row, locale)
}

export { type ClaimInput, fileClaim } from './claims.ts'
