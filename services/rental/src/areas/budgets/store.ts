import { countedPageOfRows, OLDEST_FIRST } from '@svc/kit'
import type { Generated, Selectable } from 'kysely'
import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The budgets area's tables: each budget, and its spend per period (with the thresholds crossed). */
export interface BudgetTables {
  rental_budgets: {
    id: string
    org_id: string
    name: string | null
    scope: 'organization' | 'engagement' | 'agent'
    engagement_id: string | null
    agent_did: string | null
    period: 'month' | 'custom'
    period_from: Date | null
    period_to: Date | null
    /** bigint: read as a string by pg, a number by PGlite; written as a number */
    limit_fils: number | string
    thresholds: number[]
    state: Generated<'active' | 'deleted'>
    created_by: string | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
  rental_budget_periods: {
    budget_id: string
    period_start: Date
    spent_fils: Generated<number | string>
    crossed: Generated<number[]>
  }
}

export type BudgetRow = Selectable<BudgetTables['rental_budgets']>

export const insertBudget = (db: RentalDb, row: Omit<BudgetRow, 'state' | 'updated_at'>) =>
  db
    .insertInto('rental_budgets')
    .values({ ...row, updated_at: row.created_at })
    .returningAll()
    .executeTakeFirstOrThrow()

/** The organization's budget (not a deleted one), or undefined; `lock` takes it FOR UPDATE. */
export const budgetOf = (db: RentalDb, orgId: string, id: string, lock = false) => {
  const q = db
    .selectFrom('rental_budgets')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .where('state', '=', 'active')
  return (lock ? q.forUpdate() : q).executeTakeFirst()
}

export const budgetsOf = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  countedPageOfRows(
    db,
    {
      table: 'rental_budgets',
      owner: ['org_id', orgId],
      where: (q) => q.where('state', '=', 'active'),
      order: OLDEST_FIRST,
    },
    { limit, offset },
  )

/** How many active budgets the organization has, counted under a transaction-scoped advisory lock (no two take the last place). */
export async function lockAndCount(trx: RentalDb, orgId: string) {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`budgets:${orgId}`}, 0))`.execute(trx)
  return (await budgetsOf(trx, orgId, 1, 0)).total
}

export const updateBudget = (
  db: RentalDb,
  id: string,
  set: Partial<Pick<BudgetRow, 'name' | 'limit_fils' | 'thresholds' | 'state'>> & { updated_at: Date },
) => db.updateTable('rental_budgets').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow()

const matching = (db: RentalDb, orgId: string, engagementId: string, agentDid: string) =>
  db
    .selectFrom('rental_budgets')
    .where('org_id', '=', orgId)
    .where('state', '=', 'active')
    .where((eb) =>
      eb.or([
        eb('scope', '=', 'organization'),
        eb.and([eb('scope', '=', 'engagement'), eb('engagement_id', '=', engagementId)]),
        eb.and([eb('scope', '=', 'agent'), eb('agent_did', '=', agentDid)]),
      ]),
    )

/**
 * The organization's active budgets that money committed for this engagement and agent falls
 * under, locked FOR UPDATE in id order (every committer locks in the same order: no deadlock).
 */
export const lockMatching = (trx: RentalDb, orgId: string, engagementId: string, agentDid: string) =>
  matching(trx, orgId, engagementId, agentDid).selectAll().orderBy('id').forUpdate().execute()

/**
 * The ids of the same budgets locked the same way, as a query for another area's statement to
 * embed (the escrow a task makes locks them in its insert): a statement that locked none spares
 * `commit` its own read; one that locked some leaves `commit` to lock them again (a no-op) and read them.
 */
export const lockMatchingIds = (db: RentalDb, orgId: string, engagementId: string, agentDid: string) =>
  matching(db, orgId, engagementId, agentDid).select('id').orderBy('id').forUpdate()

/** A budget's spend in one period (0 and nothing crossed when nothing was committed yet). */
export async function periodOf(db: RentalDb, budgetId: string, start: Date) {
  const row = await db
    .selectFrom('rental_budget_periods')
    .select(['spent_fils', 'crossed'])
    .where('budget_id', '=', budgetId)
    .where('period_start', '=', start)
    .executeTakeFirst()
  return { spent: Number(row?.spent_fils ?? 0), crossed: row?.crossed ?? [] }
}

/** Writes a budget's spend and crossed thresholds for a period (its budget row is locked). */
export const savePeriod = (db: RentalDb, budgetId: string, start: Date, spent: number, crossed: number[]) =>
  db
    .insertInto('rental_budget_periods')
    .values({ budget_id: budgetId, period_start: start, spent_fils: spent, crossed })
    .onConflict((oc) => oc.columns(['budget_id', 'period_start']).doUpdateSet({ spent_fils: spent, crossed }))
    .execute()
