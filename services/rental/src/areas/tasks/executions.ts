import { type Kysely, type SelectQueryBuilder, sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
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

/** Where the next page starts: the last row's creation time (as PostgreSQL writes it, to the microsecond) and id. */
const encodeCursor = (createdAt: string, id: string) =>
  Buffer.from(JSON.stringify([createdAt, id]), 'utf8').toString('base64url')

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/.test(value[0]) &&
      value[1].length <= 100
    )
      return [value[0], value[1]]
  } catch {
    // not JSON: answered below
  }
  throw rentalError('invalid_request', 'querystring.cursor is not a cursor this list gave')
}

/**
 * A page of the organization's executions (its tasks, and the `also` sources' rows: tool actions),
 * newest first across all, by keyset (creation time, id): each source gives its first `limit + 1`
 * rows after the cursor, one UNION ALL orders them, so a page is the same however many are created
 * meanwhile, and `next_cursor` is null at the end.
 */
export async function executionPage(
  db: RentalDb,
  orgId: string,
  filter: ExecutionFilter,
  page: { limit: number; cursor?: string | undefined },
  also: ExecutionSource[] = [],
) {
  const after = page.cursor ? decodeCursor(page.cursor) : undefined
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
  tasks = tasks
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
  const parts = [
    ...(filter.kind === 'tool_action' ? [] : [db.selectFrom(tasks.as('t')).selectAll()]),
    ...(filter.kind === 'task'
      ? []
      : also.map((source) =>
          db.selectFrom(source(db, orgId, filter, after, page.limit + 1).as('s')).selectAll(),
        )),
  ] as unknown as Array<SelectQueryBuilder<never, never, ExecutionRow>>
  if (parts.length === 0) return { rows: [] as ExecutionRow[], nextCursor: null }
  const union = parts.slice(1).reduce((all, part) => all.unionAll(part), parts[0]!)
  const rows = (await (db as unknown as Kysely<Record<string, ExecutionRow>>)
    .selectFrom(union.as('e'))
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute()) as ExecutionRow[]
  const more = rows.length > page.limit
  const shown = rows.slice(0, page.limit)
  const last = shown[shown.length - 1]
  return {
    rows: shown,
    nextCursor: more && last ? encodeCursor(last.created_text, last.id) : null,
  }
}

/** The organization's tasks created since `since` and what they cost (canceled and rejected ones are not charged). */
export async function usageSince(db: RentalDb, orgId: string, since: Date) {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => [
      eb.fn.countAll<string>().as('tasks'),
      sql<string>`count(*) filter (where state = 'completed')`.as('completed'),
      sql<string>`coalesce(sum(price_fils) filter (where state not in ('canceled', 'rejected')), 0)`.as(
        'spend',
      ),
    ])
    .where('org_id', '=', orgId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow()
  return { tasks: Number(row.tasks), completed: Number(row.completed), spendFils: Number(row.spend) }
}
