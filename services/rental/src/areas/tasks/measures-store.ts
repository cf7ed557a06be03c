import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import type { QueryPart } from '@svc/kit'
import type { TaskRow } from './store.ts'

/** What other areas measure from ended tasks: the agents' record (areas/record) and the SLA's windows (areas/sla). */

/** The client's tasks with the agent, oldest first. */
export const tasksWith = (db: RentalDb, subject: string, did: string) =>
  db
    .selectFrom('tasks')
    .select([
      'id',
      'engagement_id',
      'state',
      'input_sha256',
      'output_sha256',
      'receipt_id',
      'receipt_leaf_hash',
      'error',
      'created_at',
      'completed_at',
    ])
    .where('org_id', '=', subject)
    .where('agent_did', '=', did)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

/** Task counts and first/last activity, for one client (subject given) or across all clients. */
export async function taskStats(db: RentalDb, did: string, subject?: string) {
  let query = db
    .selectFrom('tasks')
    .select([
      sql<number>`count(*) filter (where state = 'completed')`.as('completed'),
      sql<number>`count(*) filter (where state = 'failed')`.as('failed'),
      sql<number>`count(*) filter (where state in ('submitted', 'working', 'input-required'))`.as('running'),
      sql<Date | null>`min(created_at)`.as('first'),
      sql<Date | null>`max(coalesce(completed_at, created_at))`.as('last'),
    ])
    .where('agent_did', '=', did)
  if (subject !== undefined) query = query.where('org_id', '=', subject)
  const row = await query.executeTakeFirstOrThrow()
  const at = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString())
  return {
    tasks_completed: Number(row.completed),
    tasks_failed: Number(row.failed),
    tasks_running: Number(row.running),
    first_activity: at(row.first),
    last_activity: at(row.last),
  }
}

/**
 * The agent's record as an insurer reads it, across all clients: its tasks that ended (completed
 * or failed), those of them its agent failed (end_cause 'agent'), and the engagements they ran in.
 */
export async function failureRecord(db: RentalDb, did: string) {
  const row = await db
    .selectFrom('tasks')
    .select([
      sql<number>`count(*) filter (where state in ('completed', 'failed'))`.as('ended'),
      sql<number>`count(*) filter (where state = 'failed' and end_cause = 'agent')`.as('failed'),
    ])
    .where('agent_did', '=', did)
    .executeTakeFirstOrThrow()
  return { ended: Number(row.ended), failed_by_agent: Number(row.failed) }
}

export type EndedTask = Pick<
  TaskRow,
  'id' | 'state' | 'receipt_id' | 'receipt_leaf_hash' | 'created_at' | 'started_at' | 'completed_at'
>

/** The SLA's windows of an engagement (`slaWindowsPart`). */
export interface SlaWindows {
  completed: EndedTask[]
  ended: EndedTask[]
  recent: { completed: number; failed: number }
}

type WindowRow = Omit<EndedTask, 'created_at' | 'started_at' | 'completed_at'> & {
  w: 'latency' | 'success' | 'since'
  n: string | number | null
  created_at: Date | string
  started_at: Date | string | null
  completed_at: Date | string | null
}

/**
 * The SLA's windows of an engagement, as a part of the SLA's one read (areas/sla): its last
 * `latency` completed tasks and its last `success` ended ones (completed or failed), newest end
 * first, and how many completed and failed since `since`.
 */
export function slaWindowsPart(
  engagementId: string,
  windows: { latency: number; success: number; since: Date },
): QueryPart<SlaWindows> {
  const columns = sql`id, state, receipt_id, receipt_leaf_hash, created_at, started_at, completed_at`
  const ended = sql`engagement_id = ${engagementId} and completed_at is not null`
  const query = sql`
    (select 'latency' as w, ${columns}, null::bigint as n from tasks
      where ${ended} and state = 'completed' order by completed_at desc, id desc limit ${windows.latency})
    union all
    (select 'success', ${columns}, null from tasks
      where ${ended} and state in ('completed', 'failed') order by completed_at desc, id desc limit ${windows.success})
    union all
    (select 'since', null, state, null, null, null, null, null, count(*) from tasks
      where ${ended} and state in ('completed', 'failed') and completed_at >= ${windows.since} group by state)`
  return { query, read: (rows) => windowsOf(rows as WindowRow[]) }
}

function windowsOf(rows: WindowRow[]): SlaWindows {
  const since = (state: string) => Number(rows.find((r) => r.w === 'since' && r.state === state)?.n ?? 0)
  const of = (w: 'latency' | 'success'): EndedTask[] =>
    rows
      .filter((r) => r.w === w)
      .map(({ w: _w, n: _n, ...task }) => ({
        ...task,
        created_at: new Date(task.created_at),
        started_at: task.started_at === null ? null : new Date(task.started_at),
        completed_at: task.completed_at === null ? null : new Date(task.completed_at),
      }))
  return {
    completed: of('latency'),
    ended: of('success'),
    recent: { completed: since('completed'), failed: since('failed') },
  }
}
