import { currentTraceId, NEWEST_FIRST, pageOfRows, rowById } from '@svc/kit'
import { type Generated, type Selectable, sql } from 'kysely'
import type { Json, RentalDb, RentalTables } from '../../db.ts'
import type { syncLease } from './lease-store.ts'

/** The tasks area's table: every task, its input while it runs, its output while kept, its receipt. */
export interface TaskTables {
  tasks: {
    id: string
    /** null for a trial's free task (areas/trials), which has `trial_id` instead: one of the two */
    engagement_id: string | null
    trial_id: string | null
    org_id: string
    agent_did: string
    state: 'submitted' | 'working' | 'input-required' | 'completed' | 'failed' | 'canceled' | 'rejected'
    async: boolean
    price_fils: number
    input_text: string | null
    input_sha256: string
    output: Json | null
    output_text: string | null
    output_sha256: string | null
    output_expires_at: Date | null
    output_removed_at: Date | null
    agent_task_id: string | null
    agent_result: Json | null
    agent_signature: string | null
    receipt_id: string | null
    receipt_leaf_hash: string | null
    error: string | null
    /** who ended a task that did not complete: its agent, or its client (migration 0052); null otherwise */
    end_cause: 'agent' | 'client' | null
    runs: Json | null
    created_at: Generated<Date>
    started_at: Date | null
    completed_at: Date | null
    agent_version: string | null
    /** the engagement's files handed to the agent (ids of rental_files); null: none */
    file_ids: Json | null
    /** the run's lease (lease-store.ts): the instance running it (null: queued), until when */
    lease_owner: string | null
    lease_until: Date | null
    /** the run job that may run the task; when it waits for a retry, the retry's time */
    run_job: string | null
    retry_at: Date | null
    /** how many times the client retried the task */
    run_round: Generated<number>
    /** the trace the task was created in (migration 0054); null when tracing was off */
    trace_id: Generated<string | null>
  }
  /** The rental's instances, each heartbeating (lease-store.ts). */
  rental_instances: {
    id: string
    address: string
    pid: number
    period_s: number
    started_at: Generated<Date>
    heartbeat_at: Generated<Date>
    stopped_at: Date | null
  }
}

export type TaskRow = Selectable<RentalTables['tasks']>
type TaskState = TaskRow['state']
/** Not ended: a task waiting on an approval (`input-required`) has not ended either. */
const RUNNING: TaskState[] = ['submitted', 'working', 'input-required']

/** The client's task, or undefined (another client's is not found either). */
export const taskOf = (db: RentalDb, subject: string, id: string, lock = false) =>
  rowById(db, 'tasks', id, { match: { org_id: subject }, lock })

export const taskById = (db: RentalDb, id: string, lock = false) => rowById(db, 'tasks', id, { lock })

export const tasksOf = (db: RentalDb, subject: string, limit: number, offset: number) =>
  pageOfRows(db, { table: 'tasks', owner: ['org_id', subject], order: NEWEST_FIRST }, { limit, offset })

/** The insert of a new task, answering its row (run beside its `task.created` event: service.ts). */
export function insertTask(
  trx: RentalDb,
  row: Pick<
    TaskRow,
    | 'id'
    | 'engagement_id'
    | 'org_id'
    | 'agent_did'
    | 'state'
    | 'async'
    | 'price_fils'
    | 'input_text'
    | 'input_sha256'
    | 'started_at'
    | 'agent_version'
  > &
    Partial<Pick<TaskRow, 'trial_id'>> & {
      file_ids?: string[] | undefined
      /** a sync task's run: the lease its instance holds from the insert (lease-store.ts) */
      lease?: ReturnType<typeof syncLease> | undefined
    },
) {
  const { file_ids, lease, ...rest } = row
  const traceId = currentTraceId()
  return trx
    .insertInto('tasks')
    .values({
      ...rest,
      ...lease,
      ...(traceId ? { trace_id: traceId } : {}),
      file_ids: file_ids?.length ? JSON.stringify(file_ids) : null,
    })
    .returningAll()
}

/** How a task that did not complete ended, and who caused it (an insurance claim reads the cause). */
export interface TaskEnd {
  state: 'failed' | 'canceled'
  error: string
  at: Date
  cause: 'agent' | 'client'
}

/**
 * Ends the task as failed or canceled with its reason (a canceled task's input dropped; a failed
 * one keeps it for a retry); `running` changes it only while it has not ended. One statement, which
 * answers the state it left (the row locked by its subquery), or undefined when it did not change.
 */
export async function endTask(
  db: RentalDb,
  id: string,
  end: TaskEnd,
  only: { running?: boolean; subject?: string } = {},
): Promise<{ from: TaskState; orgId: string; engagementId: string } | undefined> {
  const { rows } = await sql<{ from: TaskState; org_id: string; engagement_id: string }>`
    update tasks set state = ${end.state}, error = ${end.error}, completed_at = ${end.at}, end_cause = ${end.cause},
      input_text = ${end.state === 'canceled' ? null : sql`tasks.input_text`}
    from (
      select id, state from tasks
      where id = ${id}
        ${only.running ? sql`and state in (${sql.join(RUNNING)})` : sql``}
        ${only.subject !== undefined ? sql`and org_id = ${only.subject}` : sql``}
      for update
    ) old
    where tasks.id = old.id
    returning old.state as "from", tasks.org_id, tasks.engagement_id`.execute(db)
  const row = rows[0]
  return row && { from: row.from, orgId: row.org_id, engagementId: row.engagement_id }
}

/**
 * Completes a task, answering its completed row. `expect`: the state and start its run knows,
 * without a lock on the row: then it completes only a row still in them (undefined otherwise);
 * without, the caller holds the row locked.
 */
export async function completeTask(
  trx: RentalDb,
  id: string,
  expect: Pick<TaskRow, 'state' | 'started_at'> | undefined,
  done: {
    output: unknown
    outputText: string | null
    outputSha256: string
    outputExpiresAt: Date
    agentTaskId: string
    agentResult: unknown
    agentSignature: string
    receiptId: string
    receiptLeafHash: string
    at: Date
  },
) {
  return trx
    .updateTable('tasks')
    .set({
      state: 'completed',
      output: JSON.stringify(done.output),
      output_text: done.outputText,
      output_sha256: done.outputSha256,
      output_expires_at: done.outputExpiresAt,
      agent_task_id: done.agentTaskId,
      agent_result: JSON.stringify(done.agentResult),
      agent_signature: done.agentSignature,
      receipt_id: done.receiptId,
      receipt_leaf_hash: done.receiptLeafHash,
      completed_at: done.at,
      // the input stays as long as the output (purgeOutputs), so the task's page shows both
      error: null,
      end_cause: null,
    })
    .where('id', '=', id)
    .$if(expect !== undefined, (q) =>
      q
        .where('state', '=', expect!.state)
        .where(sql<boolean>`started_at is not distinct from ${expect!.started_at}::timestamptz`),
    )
    .returningAll()
    .executeTakeFirst()
}

/**
 * Approvals (areas/approvals): a working task whose agent asked for input waits in
 * `input-required` (with the agent's task id, to answer on); true when it was working.
 */
export async function awaitInput(trx: RentalDb, id: string, agentTaskId: string): Promise<boolean> {
  const result = await trx
    .updateTable('tasks')
    .set({ state: 'input-required', agent_task_id: agentTaskId })
    .where('id', '=', id)
    .where('state', '=', 'working')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** An approved task back to `submitted` for the runner's job; false when it is not waiting. */
export const resumeWaiting = (trx: RentalDb, id: string) =>
  trx
    .updateTable('tasks')
    .set({ state: 'submitted', async: true })
    .where('id', '=', id)
    .where('state', '=', 'input-required')
    .returning(['id', 'org_id', 'engagement_id'])
    .executeTakeFirst()

/** A waiting task ends (rejected, or failed when its approval expired: the client's doing); undefined when it is not waiting. */
export const endWaiting = (
  trx: RentalDb,
  id: string,
  end: { state: 'rejected' | 'failed'; error: string; at: Date },
) =>
  trx
    .updateTable('tasks')
    .set({ state: end.state, error: end.error, completed_at: end.at, input_text: null, end_cause: 'client' })
    .where('id', '=', id)
    .where('state', '=', 'input-required')
    .returning(['id', 'org_id', 'engagement_id'])
    .executeTakeFirst()

/** A trial's tasks, oldest first, with their receipts (areas/trials: the views and the converted SLA). */
export const tasksOfTrial = (db: RentalDb, trialId: string) =>
  db
    .selectFrom('tasks')
    .select(['id', 'state', 'receipt_id', 'receipt_leaf_hash', 'created_at', 'completed_at'])
    .where('trial_id', '=', trialId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

/** The completed ones among these tasks, with their receipt. */
export const completedTasks = (db: RentalDb, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('tasks')
        .select(['id', 'state', 'completed_at', 'receipt_id', 'receipt_leaf_hash'])
        .where('id', 'in', ids)
        .where('state', '=', 'completed')
        .execute()

/** The organization's tasks among `ids` (a batch's export page). */
export const tasksOfIds = (db: RentalDb, orgId: string, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db.selectFrom('tasks').selectAll().where('org_id', '=', orgId).where('id', 'in', ids).execute()

/** The organization's tasks of one engagement, oldest first (an engagement's end and export). */
export const tasksOfEngagement = (db: RentalDb, orgId: string, engagementId: string) =>
  db
    .selectFrom('tasks')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

/** The states of these tasks. */
export const statesOf = (db: RentalDb, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db.selectFrom('tasks').select(['id', 'state']).where('id', 'in', ids).execute()

/** The client's unfinished tasks with the agent fail with `reason` (its kill switch: the client's doing); answers each with the state it left. */
export async function stopTasksWith(db: RentalDb, subject: string, did: string, reason: string, at: Date) {
  const { rows } = await sql<{ id: string; from: TaskState; engagement_id: string }>`
    update tasks set state = 'failed', error = ${reason}, completed_at = ${at}, input_text = null,
      end_cause = 'client'
    from (
      select id, state from tasks
      where org_id = ${subject} and agent_did = ${did} and state in (${sql.join(RUNNING)})
      for update
    ) old
    where tasks.id = old.id
    returning tasks.id, old.state as "from", tasks.engagement_id`.execute(db)
  return rows
}

export interface TaskFilter {
  /** The engagements a token is limited to; null for all of the owner's. */
  engagementIds: string[] | null
  contextId?: string | undefined
  /** A rental state; null matches nothing (a state the rental does not have). */
  state?: TaskRow['state'] | null | undefined
  /** Only tasks whose status time (completed, else started, else created) is after this. */
  statusAfter?: Date | undefined
}

function filtered(db: RentalDb, owner: string, filter: TaskFilter) {
  let query = db.selectFrom('tasks').where('org_id', '=', owner)
  if (filter.engagementIds !== null)
    query =
      filter.engagementIds.length === 0
        ? query.where('id', '=', '')
        : query.where('engagement_id', 'in', filter.engagementIds)
  if (filter.contextId) query = query.where('engagement_id', '=', filter.contextId)
  if (filter.state !== undefined)
    query = filter.state === null ? query.where('id', '=', '') : query.where('state', '=', filter.state)
  if (filter.statusAfter)
    query = query.where(sql<Date>`coalesce(completed_at, started_at, created_at)`, '>', filter.statusAfter)
  return query
}

/** A page of the owner's task ids (newest first, as the task list orders them) and the total. */
export async function taskIdPage(
  db: RentalDb,
  owner: string,
  filter: TaskFilter,
  limit: number,
  offset: number,
) {
  const rows = await filtered(db, owner, filter)
    .select('id')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()
  const total = await filtered(db, owner, filter)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return { ids: rows.map((r) => r.id), total: Number(total.n) }
}

/** How many of the agent's tasks (every client's) are submitted or working: a limited listing's load. */
export const runningWith = async (db: RentalDb, agentDid: string) =>
  Number(
    (
      await db
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('agent_did', '=', agentDid)
        .where('state', 'in', ['submitted', 'working'])
        .executeTakeFirstOrThrow()
    ).n,
  )

/** Not ended: a task waiting on an approval (`input-required`) holds its place (the index of migration 0033). */
const UNFINISHED: Array<TaskRow['state']> = ['submitted', 'working', 'input-required']

/** The engagement's unfinished tasks (in the caller's transaction, after its lock). */
export async function unfinishedCount(db: RentalDb, engagementId: string) {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('engagement_id', '=', engagementId)
    .where('state', 'in', UNFINISHED)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The engagement's creations take turns until `trx` ends (a transaction-scoped advisory lock). */
export async function capacityTurn(trx: RentalDb, engagementId: string) {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`task-capacity:${engagementId}`}, 0))`.execute(
    trx,
  )
}
