import { randomBytes } from 'node:crypto'
import { isEd25519DidKey, money, type MoneyLocale, type Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type Actor, type EventService, type EventType, SYSTEM } from '../events/index.ts'
import * as store from './store.ts'
import type { BudgetRow } from './store.ts'

/** Whether an engagement is the organization's (the engagements area hands this over: it needs budgets). */
export type EngagementLookup = (orgId: string, engagementId: string) => Promise<boolean>

export interface BudgetDeps extends RentalContext {
  events: EventService
  engagementExists: EngagementLookup
}

/** What money a commit is: for this engagement and agent of the organization, at this time. */
export interface Commitment {
  orgId: string
  engagementId: string
  agentDid: string
  amountFils: number
  at: Date
}

export const MAX_FILS = Number.MAX_SAFE_INTEGER
export const DEFAULT_THRESHOLDS = [50, 80, 100]
/** Budgets an organization may hold at once. */
export const MAX_BUDGETS = 100

const newBudgetId = () => `bgt_${randomBytes(12).toString('base64url')}`

/** The period of the budget that `at` falls in ([start, end)), or undefined when none does (custom). */
export function periodAt(row: BudgetRow, at: Date): { start: Date; end: Date } | undefined {
  if (row.period === 'custom') {
    const start = row.period_from!
    const end = row.period_to!
    return at >= start && at < end ? { start, end } : undefined
  }
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1))
  return { start, end }
}

/** The period a view shows: the current one (a custom period's own bounds, even before or after it). */
const shownPeriod = (row: BudgetRow, now: Date) =>
  periodAt(row, now) ?? { start: row.period_from!, end: row.period_to! }

/** A budget as the API shows it: its limit, what is spent and left in the period shown, the thresholds crossed. */
export async function budgetView(db: RentalDb, row: BudgetRow, now: Date, locale: MoneyLocale = 'en') {
  const period = shownPeriod(row, now)
  const { spent, crossed } = await store.periodOf(db, row.id, period.start)
  const limit = Number(row.limit_fils)
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    engagement_id: row.engagement_id,
    agent_did: row.agent_did,
    period: row.period,
    period_start: period.start.toISOString(),
    period_end: period.end.toISOString(),
    limit: money(limit, 'AED', locale),
    spent: money(spent, 'AED', locale),
    left: money(Math.max(limit - spent, 0), 'AED', locale),
    thresholds: row.thresholds,
    thresholds_crossed: [...crossed].sort((a, b) => a - b),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}
export type BudgetView = Awaited<ReturnType<typeof budgetView>>

export interface NewBudget {
  name?: string | undefined
  limit_fils: number
  thresholds?: number[] | undefined
  engagement_id?: string | undefined
  agent_did?: string | undefined
  period?: 'month' | { from: string; to: string } | undefined
}

/** 400 unless a positive integer no larger than 2^53-1 (the schema says so too; rules hold without it). */
function checkLimit(limit: number) {
  if (!Number.isSafeInteger(limit) || limit <= 0)
    throw rentalError('invalid_request', 'limit_fils must be a positive integer no larger than 2^53-1')
  return limit
}

function checkThresholds(thresholds: number[]) {
  if (thresholds.length > 10 || thresholds.some((t) => !Number.isInteger(t) || t < 1 || t > 100))
    throw rentalError('invalid_request', 'thresholds: at most 10 whole percentages from 1 to 100')
  return [...new Set(thresholds)].sort((a, b) => a - b)
}

function customPeriod(period: { from: string; to: string }) {
  const from = new Date(period.from)
  const to = new Date(period.to)
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()))
    throw rentalError('invalid_request', 'period.from and period.to must be ISO 8601 date-times')
  if (from >= to) throw rentalError('invalid_request', 'period.from must be before period.to')
  return { from, to }
}

export async function createBudget(
  deps: BudgetDeps,
  orgId: string,
  input: NewBudget,
  actor: Actor,
  locale: MoneyLocale,
) {
  const limit = checkLimit(input.limit_fils)
  const thresholds = checkThresholds(input.thresholds ?? DEFAULT_THRESHOLDS)
  if (input.engagement_id !== undefined && input.agent_did !== undefined)
    throw rentalError('invalid_request', 'give engagement_id or agent_did, not both')
  if (input.agent_did !== undefined && !isEd25519DidKey(input.agent_did))
    throw rentalError('invalid_agent_did', 'agent_did is not an Ed25519 did:key')
  if (input.engagement_id !== undefined && !(await deps.engagementExists(orgId, input.engagement_id)))
    throw rentalError('engagement_not_found', `no engagement ${input.engagement_id}`)
  const custom = typeof input.period === 'object' ? customPeriod(input.period) : undefined
  const now = deps.now()
  const row = await inTransaction(deps.db, async (trx) => {
    if ((await store.lockAndCount(trx, orgId)) >= MAX_BUDGETS)
      throw rentalError('budget_limit', `an organization holds at most ${MAX_BUDGETS} budgets`)
    const made = await store.insertBudget(trx, {
      id: newBudgetId(),
      org_id: orgId,
      name: input.name ?? null,
      scope: input.engagement_id ? 'engagement' : input.agent_did ? 'agent' : 'organization',
      engagement_id: input.engagement_id ?? null,
      agent_did: input.agent_did ?? null,
      period: custom ? 'custom' : 'month',
      period_from: custom?.from ?? null,
      period_to: custom?.to ?? null,
      limit_fils: limit,
      thresholds,
      created_by: actor.id,
      created_at: now,
    })
    await record(deps, trx, made, 'budget.created', actor, {
      limit_fils: limit,
      thresholds,
      scope: made.scope,
    })
    return made
  })
  return budgetView(deps.db, row, now, locale)
}

export async function budgetDetail(deps: BudgetDeps, orgId: string, id: string, locale: MoneyLocale) {
  const row = await store.budgetOf(deps.db, orgId, id)
  if (!row) throw notFound(id)
  return budgetView(deps.db, row, deps.now(), locale)
}

export async function budgetList(deps: BudgetDeps, orgId: string, page: Page, locale: MoneyLocale) {
  const { rows, total } = await store.budgetsOf(deps.db, orgId, page.limit, page.offset)
  const now = deps.now()
  const budgets = []
  for (const row of rows) budgets.push(await budgetView(deps.db, row, now, locale))
  return { budgets, total, limit: page.limit, offset: page.offset }
}

const notFound = (id: string) => rentalError('budget_not_found', `no budget ${id}`)

/** A new limit, thresholds or name; the spend so far stays (a lower limit refuses the next commits). */
export async function updateBudget(
  deps: BudgetDeps,
  orgId: string,
  id: string,
  input: { name?: string | undefined; limit_fils?: number | undefined; thresholds?: number[] | undefined },
  actor: Actor,
  locale: MoneyLocale,
) {
  const set = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.limit_fils !== undefined ? { limit_fils: checkLimit(input.limit_fils) } : {}),
    ...(input.thresholds !== undefined ? { thresholds: checkThresholds(input.thresholds) } : {}),
  }
  const now = deps.now()
  const row = await inTransaction(deps.db, async (trx) => {
    if (!(await store.budgetOf(trx, orgId, id, true))) throw notFound(id)
    const updated = await store.updateBudget(trx, id, { ...set, updated_at: now })
    await record(deps, trx, updated, 'budget.updated', actor, set)
    return updated
  })
  return budgetView(deps.db, row, now, locale)
}

export async function deleteBudget(deps: BudgetDeps, orgId: string, id: string, actor: Actor) {
  await inTransaction(deps.db, async (trx) => {
    if (!(await store.budgetOf(trx, orgId, id, true))) throw notFound(id)
    const deleted = await store.updateBudget(trx, id, { state: 'deleted', updated_at: deps.now() })
    await record(deps, trx, deleted, 'budget.deleted', actor, {})
  })
  return { id, deleted: true as const }
}

/**
 * Commits money against the budgets it falls under, in the caller's transaction (the one that
 * writes the escrow): the matching budgets are locked FOR UPDATE, so concurrent commits are
 * serialised; if the amount would take any of them past its limit in the period, 402
 * `budget_exceeded` naming the budget and what is left (the caller's transaction rolls back);
 * otherwise each budget's spend grows, and each threshold crossed for the first time in the
 * period is a `budget.threshold` event in the same transaction.
 */
export async function commit(
  deps: Pick<BudgetDeps, 'events'>,
  trx: RentalDb,
  c: Commitment,
  locked?: { matched: number },
) {
  // the caller's statement locked the matching budgets (`lockedBudgetIds`) and found none
  if (c.amountFils <= 0 || locked?.matched === 0) return
  const budgets = await store.lockMatching(trx, c.orgId, c.engagementId, c.agentDid)
  const writes = []
  for (const budget of budgets) {
    const period = periodAt(budget, c.at)
    if (!period) continue
    const { spent, crossed } = await store.periodOf(trx, budget.id, period.start)
    const limit = Number(budget.limit_fils)
    if (spent + c.amountFils > limit)
      throw rentalError(
        'budget_exceeded',
        `budget ${budget.id} has ${Math.max(limit - spent, 0)} fils left in its period; this needs ${c.amountFils}`,
      )
    writes.push({ budget, period, spent: spent + c.amountFils, crossed, limit })
  }
  for (const { budget, period, spent, crossed, limit } of writes) {
    // a threshold is crossed when spent ≥ t % of the limit (integers: no rounding)
    const now = budget.thresholds.filter((t) => spent * 100 >= limit * t && !crossed.includes(t))
    await store.savePeriod(trx, budget.id, period.start, spent, [...crossed, ...now])
    for (const threshold of now)
      await record(deps, trx, budget, 'budget.threshold', SYSTEM, {
        threshold,
        period_start: period.start.toISOString(),
        period_end: period.end.toISOString(),
        limit_fils: limit,
        spent_fils: spent,
      })
  }
}

/**
 * Releases money committed earlier (a settled refund gives it back), in the caller's transaction:
 * the matching budgets locked in the same order as commit, and each one's spend in the period of
 * `c.at` (when the money was committed) lowered by the amount, never below 0. The crossed
 * thresholds stay crossed: `budget.threshold` is once per period.
 */
export async function release(trx: RentalDb, c: Commitment) {
  if (c.amountFils <= 0) return
  const budgets = await store.lockMatching(trx, c.orgId, c.engagementId, c.agentDid)
  for (const budget of budgets) {
    const period = periodAt(budget, c.at)
    if (!period) continue
    const { spent, crossed } = await store.periodOf(trx, budget.id, period.start)
    if (spent === 0) continue
    await store.savePeriod(trx, budget.id, period.start, Math.max(spent - c.amountFils, 0), crossed)
  }
}

/** A budget's event, in `trx`: about the budget (and its engagement when it has one). */
const record = (
  deps: Pick<BudgetDeps, 'events'>,
  trx: RentalDb,
  row: BudgetRow,
  type: EventType,
  actor: Actor,
  data: Record<string, unknown>,
) =>
  deps.events.record(trx, {
    orgId: row.org_id,
    type,
    subjects: { budget_id: row.id, ...(row.engagement_id ? { engagement_id: row.engagement_id } : {}) },
    actor,
    data,
  })
