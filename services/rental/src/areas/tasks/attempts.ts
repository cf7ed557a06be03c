import { randomUUID } from 'node:crypto'
import { afterCommit } from '@svc/kit'
import { PublicUrlError } from '@svc/kit/http/public-fetch'
import { inTransaction, type RentalDb } from '../../db.ts'
import { type Actor, SYSTEM } from '../events/index.ts'
import type { AgentReply } from './dispatch.ts'
import { endRunning, refOf, taskEvents } from './events.ts'
import { extendQueued, queueRun } from './lease-store.ts'
import { RUN_QUEUE, type TaskDeps } from './service.ts'
import { recordFailedRun } from './run-store.ts'
import type { TaskRow } from './store.ts'

/**
 * A task's attempts: each run job is one attempt; a failed one is kept in `runs` and the next is
 * a new job, queued after a backoff in the same transaction, until the retries run out and the task
 * fails for good. The task row names its one run job (`run_job`): a stale job does nothing.
 */

/** A run job's data: the task, the answer to the agent's question (an approval), the attempt of this round. */
export interface RunJob {
  task_id: string
  reply?: (AgentReply & { text: string }) | undefined
  /** 1 when absent (a new task, a retry by the client, an approval, a sync task gone async) */
  attempt?: number | undefined
}

/** How long a queued run may wait for a worker before the sweep asks the queue about its job. */
export const QUEUE_SLACK_S = 600

/** The delay before the attempt after `attempt` failed: exponential, capped, full jitter. */
export function backoffMs(backoff: { baseMs: number; capMs: number }, attempt: number): number {
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.min(attempt - 1, 40))
  return Math.floor(Math.random() * ceiling)
}

/** What a task waiting for its next attempt says: the last error and when it is tried again. */
export const retryNote = (error: string, at: Date) =>
  `the last attempt failed (${error.slice(0, 200)}); trying again at ${at.toISOString().slice(11, 19)} UTC`

/**
 * The task's run as a new job, queued in `trx` to start after `delayMs`: the task is async from
 * now on and its lease is the queue's. Answers when the attempt starts (null: at once), or
 * undefined when the task has ended (no job then).
 */
export async function enqueueRun(
  deps: Pick<TaskDeps, 'jobs'>,
  trx: RentalDb,
  data: RunJob,
  delayMs = 0,
): Promise<Date | null | undefined> {
  const id = randomUUID()
  const delayS = delayMs / 1000
  const queued = await queueRun(trx, data.task_id, id, delayS, QUEUE_SLACK_S)
  if (!queued) return undefined
  await deps.jobs.enqueue(trx, RUN_QUEUE, data, { id, ...(delayS > 0 ? { startAfter: delayS } : {}) })
  if (delayS === 0) afterCommit(trx, () => deps.jobs.wake(RUN_QUEUE))
  return queued.retry_at
}

/**
 * One failed attempt, in `trx`: kept in `runs`, then the next attempt queued after `delayMs`, or
 * past the last retry (or at once when the failure is `final`: another attempt would meet it again)
 * the task failed for good (its escrow as any failed task's: `endRunning`). Answers when the next attempt starts, `failed`, or undefined when the task had ended.
 */
export async function failAttempt(
  deps: TaskDeps,
  trx: RentalDb,
  data: RunJob,
  failed: { attempt: number; error: string; startedAt: Date | null; delayMs: number; final?: boolean },
  actor: Actor,
): Promise<Date | null | 'failed' | undefined> {
  const error = failed.error.slice(0, 500)
  const run = await recordFailedRun(trx, data.task_id, deps.now(), error, failed.startedAt)
  if (!run) return undefined
  const ref = { id: data.task_id, orgId: run.orgId, engagementId: run.engagementId }
  const events = taskEvents(deps.events)
  if (failed.final || failed.attempt > deps.config.taskRetries) {
    await events.trace(trx, ref, actor, { attempt: run.attempt, error })
    const end = {
      state: 'failed' as const,
      error: failed.final ? error : `gave up after ${failed.attempt} attempts: ${error}`,
      cause: 'agent' as const,
    }
    const ended = await endRunning(deps, trx, data.task_id, { ...end, at: deps.now() }, actor)
    return ended && 'failed'
  }
  const next = { ...data, attempt: failed.attempt + 1 }
  const at = await enqueueRun(deps, trx, next, failed.delayMs)
  await events.trace(trx, ref, actor, {
    attempt: run.attempt,
    error,
    ...(at ? { retry_at: at.toISOString(), message: retryNote(error, at) } : {}),
  })
  return at
}

/**
 * A failed attempt in a transaction of its own, the next one after the configured backoff. An
 * agent address the outbound guard refuses (an external card naming a private or metadata
 * endpoint) is final: no retry reaches it either.
 */
export const attemptFailed = (
  deps: TaskDeps,
  data: RunJob,
  attempt: number,
  err: unknown,
  startedAt: Date,
  actor: Actor,
) => {
  const refused = err instanceof PublicUrlError
  const error = refused ? `the agent's address is refused: ${err.message}` : (err as Error).message
  return inTransaction(deps.db, (trx) =>
    failAttempt(
      deps,
      trx,
      data,
      {
        attempt,
        error,
        startedAt,
        delayMs: backoffMs(deps.config.taskRetryBackoff, attempt),
        final: refused,
      },
      actor,
    ),
  )
}

/** A task's run job as the queue has it, read before a take-back's transaction (`runJobOf`). */
export interface RunJobRead {
  id: string | null
  job: Awaited<ReturnType<TaskDeps['jobs']['job']>> | null
}

/**
 * The run job `id` as the queue has it. Read outside any transaction: the queue has connections of
 * its own, and on the embedded database one connection, which an open transaction holds.
 */
export async function runJobOf(deps: Pick<TaskDeps, 'jobs'>, id: string | null): Promise<RunJobRead> {
  return { id, job: id ? await deps.jobs.job(RUN_QUEUE, id).catch(() => null) : null }
}

/**
 * Takes back, in `trx`, a running task whose lease may be taken (the row locked by the caller):
 * - its attempt was cut (its instance stopped, or the attempt outlived its lease): the cut attempt
 *   is a failed one, and the next runs at once as a job, from any instance (at-least-once with the
 *   agent, which sees the same A2A message id); past the last retry the task fails for good;
 * - its queued job waits still (a long queue): the lease is made longer;
 * - its queued job is gone: queued again, the same attempt.
 */
export async function takeBack(
  deps: TaskDeps,
  trx: RentalDb,
  task: TaskRow,
  instanceGone: boolean,
  run: RunJobRead,
): Promise<'retried' | 'failed' | 'waiting' | 'requeued' | undefined> {
  // the job was read before the transaction; another run named since is left for the next sweep
  if (run.id !== task.run_job) return undefined
  const job = run.job
  const data: RunJob = { ...(job?.data as RunJob | undefined), task_id: task.id }
  if (task.lease_owner === null) {
    if (job && (job.state === 'created' || job.state === 'retry' || job.state === 'active')) {
      await extendQueued(trx, task.id, QUEUE_SLACK_S)
      return 'waiting'
    }
    if ((await enqueueRun(deps, trx, data)) === undefined) return undefined
    await taskEvents(deps.events).trace(trx, refOf(task), SYSTEM, {
      message: 'the task’s run job was lost: the attempt is queued again',
    })
    return 'requeued'
  }
  // a sync task's first attempt had no job; a job's attempt counts its own retries after a fault
  const attempt = job ? (data.attempt ?? 1) + (job.retryCount ?? 0) : 1
  const error = instanceGone
    ? 'the rental instance running this attempt stopped before it ended'
    : 'this attempt did not end within its lease (the rental lost it: a database or network fault)'
  const outcome = await failAttempt(
    deps,
    trx,
    data,
    { attempt, error, startedAt: task.started_at, delayMs: 0 },
    SYSTEM,
  )
  return outcome === undefined ? undefined : outcome === 'failed' ? 'failed' : 'retried'
}
