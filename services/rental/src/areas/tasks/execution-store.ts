import { type Kysely, type SelectQueryBuilder, sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import type { TaskRow } from './store.ts'

/** GET /v1/executions' filters: a kind, a state, an agent, an engagement, a period of creation. */
export interface ExecutionFilter {
  kind?: 'task' | 'tool_action' | undefined
  /** A task's state, or a tool action's (the states they share match both). */
  state?: string | undefined
  agentDid?: string | undefined
  engagementId?: string | undefined
  since?: Date | undefined
  until?: Date | undefined
}

/** One execution as the list answers it: a task, or a tool action (its tool and task named). */
export interface ExecutionRow {
  kind: 'task' | 'tool_action'
  id: string
  engagement_id: string | null
  trial_id: string | null
  agent_did: string
  state: string
  price_fils: number
  error: string | null
  receipt_id: string | null
  created_at: Date
  started_at: Date | null
  completed_at: Date | null
  /** created_at as PostgreSQL writes it, to the microsecond (the cursor). */
  created_text: string
  tool: string | null
  task_id: string | null
}

/**
 * Another source of executions (connect's tool actions): a query of its rows in `ExecutionRow`'s
 * columns, filtered, after the cursor `(created_text, id)` when given, newest first, at most `limit`.
 */
export type ExecutionSource = (
  db: RentalDb,
  orgId: string,
  filter: ExecutionFilter,
  after: [string, string] | undefined,
  limit: number,
) => SelectQueryBuilder<never, never, ExecutionRow>

/**
 * The organization's executions after the cursor `after` (its tasks, and the `also` sources'
 * rows), newest first across all, at most `limit`: each source gives its first `limit` rows after
 * the cursor and one UNION ALL orders them.
 */
export async function executionRows(
  db: RentalDb,
  orgId: string,
  filter: ExecutionFilter,
  after: [string, string] | undefined,
  limit: number,
  also: ExecutionSource[],
): Promise<ExecutionRow[]> {
  let tasks = db
    .selectFrom('tasks')
    .select([
      sql<'task'>`'task'`.as('kind'),
      'id',
      'engagement_id',
      'trial_id',
      'agent_did',
      'state',
      'price_fils',
      'error',
      'receipt_id',
      'created_at',
      'started_at',
      'completed_at',
      sql<string>`created_at::text`.as('created_text'),
      sql<string | null>`null::text`.as('tool'),
      sql<string | null>`null::text`.as('task_id'),
    ])
    .where('org_id', '=', orgId)
  if (filter.state) tasks = tasks.where('state', '=', filter.state as TaskRow['state'])
  if (filter.agentDid) tasks = tasks.where('agent_did', '=', filter.agentDid)
  if (filter.engagementId) tasks = tasks.where('engagement_id', '=', filter.engagementId)
  if (filter.since) tasks = tasks.where('created_at', '>=', filter.since)
  if (filter.until) tasks = tasks.where('created_at', '<', filter.until)
  if (after) tasks = tasks.where(sql<boolean>`(created_at, id) < (${after[0]}::timestamptz, ${after[1]})`)
  tasks = tasks.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit)
  const parts = [
    ...(filter.kind === 'tool_action' ? [] : [db.selectFrom(tasks.as('t')).selectAll()]),
    ...(filter.kind === 'task'
      ? []
      : also.map((source) => db.selectFrom(source(db, orgId, filter, after, limit).as('s')).selectAll())),
  ] as unknown as Array<SelectQueryBuilder<never, never, ExecutionRow>>
  if (parts.length === 0) return []
  const union = parts.slice(1).reduce((all, part) => all.unionAll(part), parts[0]!)
  return (await (db as unknown as Kysely<Record<string, ExecutionRow>>)
    .selectFrom(union.as('e'))
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()) as ExecutionRow[]
}

/**
 * The organization's tasks created from `since` until `until`, per UTC day: how many, how many
 * completed, and their prices (canceled and rejected ones left out). The one query behind every
 * usage count and sum (GET /v1/org's usage, GET /api/usage), so two screens cannot disagree.
 */
export async function usageByDay(db: RentalDb, orgId: string, since: Date, until?: Date) {
  let query = db
    .selectFrom('tasks')
    .select((eb) => [
      sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`.as('day'),
      eb.fn.countAll<string>().as('tasks'),
      sql<string>`count(*) filter (where state = 'completed')`.as('completed'),
      sql<string>`coalesce(sum(price_fils) filter (where state not in ('canceled', 'rejected')), 0)`.as(
        'spend',
      ),
    ])
    .where('org_id', '=', orgId)
    .where('created_at', '>=', since)
  if (until) query = query.where('created_at', '<', until)
  const rows = await query.groupBy('day').orderBy('day').execute()
  return rows.map((r) => ({
    day: r.day,
    tasks: Number(r.tasks),
    completed: Number(r.completed),
    spendFils: Number(r.spend),
  }))
}

/** The totals of `usageByDay`'s days. */
export async function usageSince(db: RentalDb, orgId: string, since: Date, until?: Date) {
  const days = await usageByDay(db, orgId, since, until)
  return {
    tasks: days.reduce((n, d) => n + d.tasks, 0),
    completed: days.reduce((n, d) => n + d.completed, 0),
    spendFils: days.reduce((n, d) => n + d.spendFils, 0),
    days,
  }
}
