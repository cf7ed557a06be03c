import { idempotentWrite, replayOf } from '@svc/kit'
import { rentalError } from '../../errors.ts'
import type { Actor } from '../events/index.ts'
import { admitTask } from './capacity.ts'
import { refOf, taskEvents } from './events.ts'
import { enqueueRun, runJobOf, takeBack } from './attempts.ts'
import { lockTakeable } from './lease-store.ts'
import type { TaskDeps } from './service.ts'
import { taskNamesOf, taskView, type TaskView } from './views.ts'
import { requeueFailed } from './run-store.ts'
import { type TaskRow, taskOf } from './store.ts'

interface StoredRun {
  attempt: number
  at: string
  error: string
  started_at?: string | null
  agent_did?: string
}

export interface RunView {
  attempt: number
  started_at: string | null
  ended_at: string | null
  outcome: 'working' | 'input-required' | 'completed' | 'failed' | 'canceled' | 'rejected'
  error: string | null
  agent_did: string
}

/**
 * The task's attempts: each failed agent call kept in `runs`, then the attempt under way or the
 * one that ended the task (completed, canceled, or failed without a call failing: a result that
 * did not verify, an agent revoked). Null when no attempt failed (the spec's `runs`).
 */
export function runsOf(task: TaskRow): RunView[] | null {
  const stored = (task.runs as StoredRun[] | null) ?? []
  if (stored.length === 0) return null
  const runs: RunView[] = stored.map((r) => ({
    attempt: r.attempt,
    started_at: r.started_at ?? null,
    ended_at: r.at,
    outcome: 'failed',
    error: r.error,
    agent_did: r.agent_did ?? task.agent_did,
  }))
  const last = stored[stored.length - 1]!
  const endedByLastRun = task.state === 'failed' && (task.error ?? '').includes(last.error)
  if (!endedByLastRun)
    runs.push({
      attempt: last.attempt + 1,
      started_at: task.started_at?.toISOString() ?? null,
      ended_at: task.completed_at?.toISOString() ?? null,
      outcome: task.state === 'submitted' ? 'working' : task.state,
      error: task.state === 'completed' ? null : task.error,
      agent_did: task.agent_did,
    })
  return runs
}

export async function taskRuns(deps: TaskDeps, subject: string, id: string) {
  const task = await taskOf(deps.db, subject, id)
  if (!task) throw rentalError('task_not_found', `no task ${id}`)
  return { task_id: id, state: task.state, runs: runsOf(task) }
}

/**
 * `POST /api/tasks/{id}/retry`: a failed task back to `submitted`, run again by the runner's job
 * as a new attempt. The task keeps its escrow, never charged on failure: the client releases it
 * only once the task completes, so the task is paid once. The task row is locked: of concurrent
 * retries one requeues it, the others find it running (409). With an Idempotency-Key a replay
 * answers the first answer. A running task whose attempt is past its lease (its instance stopped,
 * a fault lost it) is taken back now, as the sweep would (attempts.ts `takeBack`); a running task
 * whose run holds its lease is 409.
 */
export async function retryTask(
  deps: TaskDeps,
  subject: string,
  id: string,
  key: string | undefined,
  actor: Actor,
) {
  const request = { owner: subject, scope: `task-retry:${id}`, key, request: {}, reusedStatus: 409 }
  const earlier = await replayOf<TaskView>(deps.db, request)
  if (earlier) return earlier.body
  const found = await taskOf(deps.db, subject, id)
  if (!found) throw rentalError('task_not_found', `no task ${id}`)
  if (await deps.engagements.isRevoked(subject, found.agent_did))
    throw rentalError('agent_revoked', `you revoked ${found.agent_did}: it takes no new task`)
  // the view names only the escrow's id, which a task keeps: read before the transaction
  const escrow = await deps.engagements.escrowOfTask(id)
  // and its names (the catalogue's, read outside the transaction)
  const names = await taskNamesOf(deps, found)
  const run = await runJobOf(deps, found.run_job)
  const answer = await idempotentWrite(deps.db, request, async (trx) => {
    let task = (await taskOf(trx, subject, id, true))!
    if (task.state === 'submitted' || task.state === 'working') {
      const stuck = await lockTakeable(trx, id, deps.instance)
      const taken = stuck ? await takeBack(deps, trx, stuck, !stuck.lapsed, run) : undefined
      if (taken === undefined || taken === 'waiting')
        throw rentalError(
          'task_not_retryable',
          `the task ${id} is ${task.state}: its run holds its lease until ${task.lease_until?.toISOString() ?? '(none)'}; ` +
            'only a failed task, or one whose run is past its lease, is retried',
        )
      task = (await taskOf(trx, subject, id))!
      // taken back past its last retry, it failed: the retry goes on as for any failed task
      if (task.state !== 'failed')
        return { status: 200, body: await taskView(deps, task, { ledgerIndex: null, escrow, names }) }
    }
    if (task.state !== 'failed')
      throw rentalError(
        'task_not_retryable',
        `the task ${id} is ${task.state}: only a failed task is retried`,
      )
    // a retry runs the task again: the engagement's capacity counts it as a new one
    const engagement =
      task.engagement_id === null
        ? undefined
        : await deps.engagements.engagementOf(subject, task.engagement_id, { trx, lock: true })
    // an ended engagement takes no new run (its escrow may have gone back to the wallet)
    if (engagement?.state === 'ended')
      throw rentalError(
        'engagement_ended',
        `the engagement is ended (since ${engagement.ended_at?.toISOString()}): the task is not retried`,
      )
    if (engagement) await admitTask(deps, trx, engagement)
    if (!(await requeueFailed(trx, id)))
      throw rentalError('task_not_retryable', `the task ${id} failed before its input was kept for a retry`)
    await taskEvents(deps.events).stateChanged(trx, refOf(task), actor, {
      from: 'failed',
      to: 'submitted',
      retry: true,
    })
    await enqueueRun(deps, trx, { task_id: id })
    // the view is read in the transaction: its answer is kept with it
    const row = (await taskOf(trx, subject, id))!
    return { status: 200, body: await taskView(deps, row, { ledgerIndex: null, escrow, names }) }
  })
  return answer.body
}
