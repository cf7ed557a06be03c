import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { budgetRoutes } from './routes.ts'
import {
  type BudgetDeps,
  budgetList,
  type Commitment,
  commit,
  type EngagementLookup,
  release,
} from './service.ts'
import type { Page } from '@svc/kit'

export type { Commitment, EngagementLookup }

/**
 * The ids of the budgets money committed for an engagement and agent falls under, locked FOR
 * UPDATE in id order as `commit` locks them: a query for another area's statement to embed (the
 * escrow a task makes), whose count it passes to `commit`.
 */
export { lockMatchingIds as lockedBudgetIds } from './store.ts'

export interface BudgetService {
  /** The organization's budgets, a page of them, as GET /api/budgets lists them (the tenant export). */
  list(orgId: string, page: Page): ReturnType<typeof budgetList>
  /** What the budgets' routes work with. */
  readonly deps: BudgetDeps
  /**
   * Money committed (an escrow made for a hire or a task), in the caller's transaction: 402
   * `budget_exceeded` when it would take a matching budget (the organization's, the engagement's,
   * the agent's) past its limit in the period; else the spend is counted and thresholds announced.
   * `locked`: how many budgets the caller's statement in `trx` locked with `lockedBudgetIds` (none:
   * nothing to read or count).
   */
  commit(trx: RentalDb, commitment: Commitment, locked?: { matched: number }): Promise<void>
  /**
   * Money given back (a settled refund), in the caller's transaction: the spend of the period the
   * money was committed in (`commitment.at`) goes down, with the same locks, never below 0; a
   * threshold once announced in a period is not announced again.
   */
  release(trx: RentalDb, commitment: Commitment): Promise<void>
}

/**
 * Budgets: a cap on spend per period (UTC calendar month or custom) for the organization, an
 * engagement or an agent, enforced where escrows are made (hiring, tasks) with the matching budget
 * rows locked; `budget.threshold` once per period per threshold. Tables: rental_budgets,
 * rental_budget_periods.
 */
export const budgetsArea = defineArea({
  name: 'budgets',
  needs: ['events'],
  mount(_app, ctx, use): BudgetService {
    const deps: BudgetDeps = {
      ...ctx,
      events: use.events,
      engagementExists: async (orgId, engagementId) => {
        const lookup = ctx.reactions.one('budgets.engagement')
        if (!lookup) throw new Error('the engagements area did not react to budgets.engagement')
        return lookup(orgId, engagementId)
      },
    }
    return {
      deps,
      list: (orgId, page) => budgetList(deps, orgId, page, 'en'),
      commit: (trx, c, locked) => commit(deps, trx, c, locked),
      release: (trx, c) => release(trx, c),
    }
  },
  routes(app, _ctx, _use, own) {
    budgetRoutes(app, own.deps)
  },
})
