import { type MoneyLocale, money } from '@svc/kit'
import { randomUUID } from 'node:crypto'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import {
  DEFAULT_SERVICE_LEVELS,
  engagementNotFound,
  type EngagementRow,
  type SlaBody,
} from '../engagements/index.ts'
import type { Actor } from '../events/index.ts'
import { fundsOf, unbacked } from './funds.ts'
import type { InsuranceDeps } from './service.ts'
import * as store from './store.ts'
import type { QuoteRow } from './store.ts'

/** What a quote may cover: events whose loss the record measures in money. */
export const QUOTABLE = ['failed_task', 'sla_breach'] as const
export type Quotable = (typeof QUOTABLE)[number]

/**
 * The pricing's constants (docs/money.md). Rates are measured with a prior, so an agent with a
 * thin record is priced near the prior, never at zero: a failure prior of 1 in 20 worth 20 tasks,
 * a breach prior of 1 in 10 engagement-months worth 5 engagements.
 */
export const PRICING = {
  failurePrior: { failures: 1, tasks: 20 },
  breachPrior: { breaches: 0.5, engagements: 5 },
  /** The premium is the expected loss × this (the insurer's margin for error and its costs). */
  loadingPct: 125,
  minimumPremiumFils: 100,
  /** How far back the agent's engagements are read for its breach rate. */
  engagementsRead: 500,
  quoteTtlMs: 15 * 60_000,
  defaultDays: 30,
}

/** The money the client holds at risk in the engagement: its escrows opened and not yet paid or returned (read in `db`). */
export async function moneyAtRisk(deps: InsuranceDeps, db: RentalDb, engagementId: string) {
  return (await deps.engagements.end.escrowsOf(db, engagementId))
    .filter((e) => e.state === 'open')
    .reduce((sum, e) => sum + Number(e.amount_fils), 0)
}

/** The agent's measured rates, in basis points, with the prior (see PRICING). */
async function ratesOf(deps: InsuranceDeps, agentDid: string) {
  const record = await deps.tasks.failureRecord(agentDid)
  const engagements = await deps.engagements.activatedIdsWithAgent(agentDid, PRICING.engagementsRead)
  const breaches = await deps.sla.breachCount(engagements)
  const { failurePrior: f, breachPrior: b } = PRICING
  return {
    tasks_ended: record.ended,
    tasks_failed_by_agent: record.failed_by_agent,
    failure_rate_bps: Math.ceil((10_000 * (record.failed_by_agent + f.failures)) / (record.ended + f.tasks)),
    engagements_measured: engagements.length,
    breaches,
    breach_rate_bps: Math.ceil((10_000 * (breaches + b.breaches)) / (engagements.length + b.engagements)),
  }
}

/**
 * The premium for `coverage` fils over `days`: the expected loss — a failed task's worth at the
 * failure rate, a breach's credit (credit_bps of the money at risk) at the breach rate per 30 days
 * — times the loading, rounded up, at least the minimum. Exact in BigInt.
 */
export function premiumOf(
  coverage: number,
  covers: readonly Quotable[],
  days: number,
  rates: { failure_rate_bps: number; breach_rate_bps: number },
  creditBps: number,
) {
  const f = covers.includes('failed_task') ? BigInt(rates.failure_rate_bps) : 0n
  const b = covers.includes('sla_breach') ? BigInt(rates.breach_rate_bps) : 0n
  // coverage × (f/1e4 + b/1e4 × days/30 × credit/1e4) × loading/100
  const numerator =
    BigInt(coverage) * (f * 300_000n + b * BigInt(days) * BigInt(creditBps)) * BigInt(PRICING.loadingPct)
  const denominator = 3_000_000_000n * 100n
  const premium = Number((numerator + denominator - 1n) / denominator)
  return Math.max(premium, PRICING.minimumPremiumFils)
}

const aed = (fils: number) => money(fils, 'AED', 'en').display
const declined = (why: string) => rentalError('coverage_declined', why)

export interface QuoteInput {
  covers?: Quotable[] | undefined
  coverage_fils?: number | undefined
  days?: number | undefined
}

/** The engagement as a quote or a purchase needs it: the client's, active, with no active policy. */
export async function insurable(deps: InsuranceDeps, trx: RentalDb, orgId: string, engagementId: string) {
  const engagement = await deps.engagements.engagementOf(orgId, engagementId, { trx, lock: true })
  if (!engagement) throw engagementNotFound(engagementId)
  if (engagement.state !== 'active')
    throw rentalError(
      'engagement_not_active',
      `the engagement is ${engagement.state}: only an active one is insured`,
    )
  const now = deps.ctx.now()
  const current = await store.activePolicyOf(trx, orgId, engagementId, true)
  if (current && current.ends_at > now)
    throw rentalError(
      'policy_active',
      `the engagement has the active policy ${current.id} until ${current.ends_at.toISOString()}`,
    )
  if (current) await store.endPolicy(trx, current.id)
  return engagement
}

/**
 * A quote from the platform: the coverage is the money at risk in the engagement (its opened
 * escrows) or what the insurance funds can still back if that is less, or less when asked (more
 * than at risk is 400 coverage_above_risk, more than the funds back 409); the premium is the platform's,
 * from the agent's measured rates; it holds for 15 minutes. Declined (409 coverage_declined, said
 * in words) when nothing is at risk, the agent is the client's own, the premium would be worth the
 * cover, or the insurance funds cannot back the coverage.
 */
export async function quote(
  deps: InsuranceDeps,
  orgId: string,
  engagementId: string,
  input: QuoteInput,
  actor: Actor,
  locale: MoneyLocale,
) {
  const covers = [...new Set(input.covers ?? QUOTABLE)]
  const days = input.days ?? PRICING.defaultDays
  const id = `quo_${randomUUID()}`
  // the record is read first (the pool, not the transaction: PGlite is one connection)
  const seen = await deps.engagements.engagementOf(orgId, engagementId)
  if (!seen) throw engagementNotFound(engagementId)
  if (await deps.catalogue.isProviderOf(orgId, seen.agent_did))
    throw declined(
      'the agent is your own organization’s: the platform does not insure an organization against its own agent',
    )
  const rates = await ratesOf(deps, seen.agent_did)
  await inTransaction(deps.ctx.db, async (trx) => {
    const engagement = await insurable(deps, trx, orgId, engagementId)
    const atRisk = await moneyAtRisk(deps, trx, engagementId)
    if (atRisk <= 0)
      throw declined(
        'nothing is at risk: the engagement holds no money in escrow (sign a task’s escrow first)',
      )
    if (input.coverage_fils !== undefined && input.coverage_fils > atRisk)
      throw rentalError(
        'coverage_above_risk',
        `body.coverage_fils: at most the money at risk in the engagement, ${atRisk} fils (${aed(atRisk)})`,
      )
    // unasked, the coverage is the money at risk, or what the funds can still back when that is less
    const funds = await fundsOf(deps, trx)
    const coverage = input.coverage_fils ?? Math.min(atRisk, funds.available)
    const why = unbacked(funds, Math.max(coverage, 1))
    if (why) throw declined(why)
    const creditBps = creditBpsOf(engagement)
    const premium = premiumOf(coverage, covers, days, rates, creditBps)
    if (premium >= coverage)
      throw declined(
        `the agent's measured risk prices ${aed(coverage)} of cover at ${aed(premium)} or more: the cover is worth no more than its premium, so the platform does not sell it`,
      )
    const now = deps.ctx.now()
    await store.insertQuote(trx, {
      id,
      org_id: orgId,
      engagement_id: engagementId,
      coverage_fils: coverage,
      premium_fils: premium,
      covers,
      period_days: days,
      basis: JSON.stringify({
        money_at_risk_fils: atRisk,
        ...rates,
        credit_bps_per_breach: creditBps,
        loading_pct: PRICING.loadingPct,
        minimum_premium_fils: PRICING.minimumPremiumFils,
      }),
      state: 'offered',
      expires_at: new Date(now.getTime() + PRICING.quoteTtlMs),
      created_by: actor.id,
      created_at: now,
    })
  })
  return quoteView((await store.quoteOf(deps.ctx.db, orgId, engagementId, id))!, locale)
}

export const creditBpsOf = (engagement: EngagementRow) =>
  ((engagement.sla as SlaBody).service_levels ?? DEFAULT_SERVICE_LEVELS).credit_bps_per_breach

export function quoteView(row: QuoteRow, locale: MoneyLocale) {
  const m = (fils: number) => money(fils, row.currency, locale)
  const basis = row.basis as Record<string, number>
  const covers = row.covers as Quotable[]
  const words = {
    failed_task: 'a task the agent fails (its price)',
    sla_breach: 'an SLA breach (its credit)',
  }
  return {
    id: row.id,
    engagement_id: row.engagement_id,
    state: row.state,
    coverage: m(Number(row.coverage_fils)),
    premium: m(Number(row.premium_fils)),
    covers,
    period_days: row.period_days,
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
    basis: {
      money_at_risk: m(basis.money_at_risk_fils ?? 0),
      tasks_ended: basis.tasks_ended ?? 0,
      tasks_failed_by_agent: basis.tasks_failed_by_agent ?? 0,
      failure_rate_bps: basis.failure_rate_bps ?? 0,
      engagements_measured: basis.engagements_measured ?? 0,
      breaches: basis.breaches ?? 0,
      breach_rate_bps: basis.breach_rate_bps ?? 0,
      credit_bps_per_breach: basis.credit_bps_per_breach ?? 0,
      loading_pct: basis.loading_pct ?? PRICING.loadingPct,
    },
    summary:
      `Covers ${covers.map((c) => words[c]).join(' and ')} up to ${aed(Number(row.coverage_fils))} in all, ` +
      `for ${row.period_days} days from purchase, for a premium of ${aed(Number(row.premium_fils))}. ` +
      `Priced from ${aed(basis.money_at_risk_fils ?? 0)} at risk and the agent's record: ` +
      `${basis.tasks_failed_by_agent ?? 0} of ${basis.tasks_ended ?? 0} tasks failed by the agent, ` +
      `${basis.breaches ?? 0} SLA breaches in ${basis.engagements_measured ?? 0} engagements. ` +
      `Not covered: what you cause yourself (your cancel, your kill switch, an approval you reject).`,
  }
}
