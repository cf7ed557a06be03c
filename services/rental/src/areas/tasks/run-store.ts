import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

/* A task's run, attempt by attempt: handed to the job, started, its failed attempts recorded, requeued for another. */

/** A submitted task to `working` (one conditional update); true when this call moved it. */
export async function markWorking(db: RentalDb, id: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ state: 'working', started_at: at })
    .where('id', '=', id)
    .where('state', '=', 'submitted')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/**
 * Appends a failed attempt to the task's `runs`: `{attempt, at, error, started_at, agent_did}`
 * (`at` its end), attempts counted from 1 across retries. Entries kept before `started_at` and
 * `agent_did` were recorded lack them.
 */
export async function recordFailedRun(
  db: RentalDb,
  id: string,
  at: Date,
  error: string,
  startedAt: Date | null = null,
): Promise<{ attempt: number; orgId: string; engagementId: string | null } | undefined> {
  const row = await db
    .updateTable('tasks')
    .set({
      runs: sql`coalesce(runs, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
        'attempt', coalesce(jsonb_array_length(runs), 0) + 1,
        'at', ${at.toISOString()}::text,
        'started_at', ${startedAt?.toISOString() ?? null}::text,
        'agent_did', agent_did,
        'error', ${error.slice(0, 500)}::text))`,
    })
    .where('id', '=', id)
    .returning([sql<number>`jsonb_array_length(runs)`.as('attempt'), 'org_id', 'engagement_id'])
    .executeTakeFirst()
  return row && { attempt: Number(row.attempt), orgId: row.org_id, engagementId: row.engagement_id }
}

/** A failed task (locked by the caller) back to `submitted` for a new attempt; false when it is not failed. */
export async function requeueFailed(trx: RentalDb, id: string): Promise<boolean> {
  const result = await trx
    .updateTable('tasks')
    .set({
      state: 'submitted',
      async: true,
      error: null,
      end_cause: null,
      started_at: null,
      completed_at: null,
      run_round: sql`run_round + 1`,
    })
    .where('id', '=', id)
    .where('state', '=', 'failed')
    .where('input_text', 'is not', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** The agent's own id of the task (its A2A task), and the agent, when known. */
export const agentTaskOf = (db: RentalDb, id: string) =>
  db.selectFrom('tasks').select(['agent_task_id', 'agent_did']).where('id', '=', id).executeTakeFirst()

/** Keeps the agent's task id of a task still running; false when it had ended. */
export const keepAgentTaskIfRunning = async (db: RentalDb, id: string, agentTaskId: string) =>
  (await db
    .updateTable('tasks')
    .set({ agent_task_id: agentTaskId })
    .where('id', '=', id)
    .where('state', 'in', ['working', 'submitted', 'input-required'])
    .returning(['id'])
    .executeTakeFirst()) !== undefined

/** Keeps the agent's task id of a task that did not complete; the state it is in, or undefined. */
export const keepAgentTaskUnlessCompleted = (trx: RentalDb, id: string, agentTaskId: string) =>
  trx
    .updateTable('tasks')
    .set({ agent_task_id: agentTaskId })
    .where('id', '=', id)
    .where('state', '!=', 'completed')
    .returning(['state'])
    .executeTakeFirst()

/** The organization and engagement of a task, or undefined. */
export const ownerOfTask = (db: RentalDb, id: string) =>
  db.selectFrom('tasks').select(['org_id', 'engagement_id']).where('id', '=', id).executeTakeFirst()
