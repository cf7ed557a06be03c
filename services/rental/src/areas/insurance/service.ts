import { randomUUID } from 'node:crypto'
import { type MoneyLocale, money } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import {
  engagementEvent,
  engagementNotFound,
  type EngagementService,
  walletOf,
} from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { TaskService } from '../tasks/index.ts'
import type { SlaService } from '../sla/index.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { OrgService } from '../orgs/index.ts'
import { fundsOf, POOL, unbacked } from './funds.ts'
import { insurable, moneyAtRisk } from './quote.ts'
import * as store from './store.ts'
import type { ClaimRow, CoveredEvent, PolicyRow } from './store.ts'

export interface InsuranceDeps {
  ctx: Pick<RentalContext, 'db' | 'rail' | 'now'>
  engagements: EngagementService
  events: EventService
  tasks: TaskService
  sla: SlaService
  catalogue: Pick<CatalogueService, 'isProviderOf'>
  orgs: Pick<OrgService, 'isOperator'>
}

export function claimView(row: ClaimRow, locale: MoneyLocale) {
  return {
    id: row.id,
    type: row.event_type,
    state: row.state,
    evidence: row.evidence as Record<string, string>,
    requested: money(Number(row.requested_fils), 'AED', locale),
    loss: row.loss_fils === null ? null : money(Number(row.loss_fils), 'AED', locale),
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
    quote_id: row.quote_id,
    claims: claims.map((c) => claimView(c, locale)),
    created_at: row.created_at.toISOString(),
  }
}

/** A purchase: the quote's id; the fields of the old body are named in a 400 (quote_required). */
export interface PolicyInput {
  quote_id?: string | undefined
  coverage_fils?: number | undefined
  premium_fils?: number | undefined
  covers?: unknown
  starts_at?: string | undefined
  ends_at?: string | undefined
}

/** Why an old client's body is refused, naming its field; undefined for a purchase of a quote. */
function oldBody(input: PolicyInput) {
  const how = 'ask POST /api/engagements/{id}/insurance/quote and buy the quote with {"quote_id"}'
  if (input.premium_fils !== undefined)
    return `body.premium_fils: the premium is the platform's, never the client's: ${how}`
  if (input.coverage_fils !== undefined)
    return `body.coverage_fils: the coverage is set in the quote (at most the money at risk): ${how}`
  for (const field of ['covers', 'starts_at', 'ends_at'] as const)
    if (input[field] !== undefined)
      return `body.${field}: the quote fixes what is covered and the period: ${how}`
  if (input.quote_id === undefined) return `body.quote_id is required: ${how}`
  return undefined
}

/**
 * Buys the platform's quote as it is: one active policy per engagement (an active one whose period
 * is over is ended first), the quote offered and not expired (409 quote_state), the money at risk
 * still at least the coverage, the premium charged in the same transaction as a balanced transfer
 * wallet → the pool (key `insurance-premium:<policy>`; 402 when the wallet lacks it), and then,
 * with the pool's account locked by that transfer, the funds checked to back the coverage (409
 * coverage_declined, all rolled back). The policy runs from now for the quote's days.
 */
export async function buyPolicy(
  deps: InsuranceDeps,
  orgId: string,
  engagementId: string,
  input: PolicyInput,
  actor: Actor,
) {
  // tenancy first: another organization's engagement is 404 whatever the body says
  if (!(await deps.engagements.engagementOf(orgId, engagementId))) throw engagementNotFound(engagementId)
  const old = oldBody(input)
  if (old) throw rentalError('quote_required', old)
  const quoteId = input.quote_id!
  const id = `pol_${randomUUID()}`
  await inTransaction(deps.ctx.db, async (trx) => {
    await insurable(deps, trx, orgId, engagementId)
    const now = deps.ctx.now()
    const offer = await store.quoteOf(trx, orgId, engagementId, quoteId, true)
    if (!offer) throw rentalError('quote_not_found', `no quote ${quoteId} for engagement ${engagementId}`)
    if (offer.state !== 'offered')
      throw rentalError('quote_state', `the quote ${quoteId} is ${offer.state} already: ask a new one`)
    if (offer.expires_at <= now)
      throw rentalError(
        'quote_state',
        `the quote ${quoteId} expired at ${offer.expires_at.toISOString()}: ask a new one`,
      )
    const coverage = Number(offer.coverage_fils)
    const premium = Number(offer.premium_fils)
    const atRisk = await moneyAtRisk(deps, trx, engagementId)
    if (atRisk < coverage)
      throw rentalError(
        'coverage_declined',
        `the money at risk in the engagement fell to ${atRisk} fils since the quote, below its coverage of ${coverage}: ask a new one`,
      )
    let transferId: string
    try {
      transferId = (
        await deps.ctx.rail.transfer(trx, {
          idempotencyKey: `insurance-premium:${id}`,
          kind: 'insurance_premium',
          postings: [
            { account: walletOf(orgId), amount: -premium },
            { account: POOL, amount: premium },
          ],
          memo: { policy_id: id, quote_id: quoteId, engagement_id: engagementId },
        })
      ).id
    } catch (err) {
      if ((err as { code?: string }).code === 'insufficient_funds')
        throw rentalError('premium_unpaid', `the wallet holds less than the premium of ${premium} fils`)
      throw err
    }
    const why = unbacked(await fundsOf(deps, trx), coverage)
    if (why) throw rentalError('coverage_declined', why)
    const endsAt = new Date(now.getTime() + offer.period_days * 86_400_000)
    await store.insertPolicy(trx, {
      id,
      org_id: orgId,
      engagement_id: engagementId,
      coverage_fils: coverage,
      premium_fils: premium,
      covers: offer.covers,
      starts_at: now,
      ends_at: endsAt,
      state: 'active',
      premium_transfer_id: transferId,
      quote_id: quoteId,
      created_by: actor.id,
      created_at: now,
    })
    await store.markQuoteBought(trx, quoteId)
    await engagementEvent(
      deps.events,
      trx,
      orgId,
      engagementId,
      actor,
      'insurance.policy_started',
      {
        coverage_fils: coverage,
        premium_fils: premium,
        covers: offer.covers,
        starts_at: now.toISOString(),
        ends_at: endsAt.toISOString(),
        transfer_id: transferId,
        quote_id: quoteId,
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
