import { afterCommit } from '@svc/kit'
import { inTransaction, type RentalDb } from '../../db.ts'
import { SYSTEM } from '../events/index.ts'
import {
  agentTaskOf,
  keepAgentTaskIfRunning,
  keepAgentTaskUnlessCompleted,
  ownerOfTask,
} from './run-store.ts'
import type { TaskDeps } from './service.ts'

export const AGENT_CANCEL_QUEUE = 'rental.tasks.agent_cancel'
/** Retries of an agent's CancelTask after the first attempt (1, 2, 4 s apart, with jitter). */
const RETRIES = 3
const CALL_TIMEOUT_MS = 10_000

interface AgentCancel {
  task_id: string
  agent_task_id: string
  agent_did: string
}

/**
 * The rental ended a task (canceled, rejected, expired, its agent revoked): when the agent holds
 * a task for it (its A2A task id is known), a durable job tells the agent (CancelTask) once `trx`
 * commits. Best effort: the agent's answer changes nothing at the rental.
 */
export async function tellAgent(deps: Pick<TaskDeps, 'jobs'>, trx: RentalDb, id: string): Promise<void> {
  const row = await agentTaskOf(trx, id)
  if (!row?.agent_task_id) return
  const job: AgentCancel = { task_id: id, agent_task_id: row.agent_task_id, agent_did: row.agent_did }
  await deps.jobs.enqueue(trx, AGENT_CANCEL_QUEUE, job)
  afterCommit(trx, () => deps.jobs.wake(AGENT_CANCEL_QUEUE))
}

/**
 * The agent named its task for a running one (its stream's first events, the agent still at
 * work): kept, so that a cancel can reach it; a task the rental ended meanwhile is told to the
 * agent at once. The usual
 * case (the task still running) is one statement on its own; only a task that ended meanwhile
 * takes the transaction that keeps the id and enqueues the cancel together.
 */
export async function agentTaskStarted(deps: TaskDeps, id: string, agentTaskId: string): Promise<void> {
  if (await keepAgentTaskIfRunning(deps.db, id, agentTaskId)) return
  await inTransaction(deps.db, async (trx) => {
    const row = await keepAgentTaskUnlessCompleted(trx, id, agentTaskId)
    if (row && row.state !== 'working' && row.state !== 'submitted' && row.state !== 'input-required')
      await tellAgent(deps, trx, id)
  })
}

/** The worker: CancelTask at the agent, retried; past the retries the failure is logged and recorded. */
export async function startAgentCancels(deps: TaskDeps): Promise<void> {
  await deps.jobs.queue(AGENT_CANCEL_QUEUE, {
    retryLimit: RETRIES,
    retryDelay: 1,
    retryBackoff: true,
    expireInSeconds: CALL_TIMEOUT_MS / 1000 + 10,
  })
  await deps.jobs.work<AgentCancel>(
    AGENT_CANCEL_QUEUE,
    async (data, job) => {
      try {
        const cardUrl = await deps.catalogue.cardUrl(data.agent_did)
        if (!cardUrl) throw new Error(`the agent ${data.agent_did} is not in the catalogue`)
        await deps.dispatcher.cancel(cardUrl, data.agent_task_id, AbortSignal.timeout(CALL_TIMEOUT_MS))
      } catch (err) {
        if ((job.retryCount ?? 0) < RETRIES) throw err
        const error = (err as Error).message.slice(0, 500)
        deps.log.warn({ task: data.task_id, agent_task_id: data.agent_task_id, err: error }, 'agent not told')
        const task = await ownerOfTask(deps.db, data.task_id)
        if (task)
          await inTransaction(deps.db, (trx) =>
            deps.events.record(trx, {
              orgId: task.org_id,
              type: 'task.agent_cancel_failed',
              stream: data.task_id,
              subjects: task.engagement_id
                ? { task_id: data.task_id, engagement_id: task.engagement_id }
                : { task_id: data.task_id },
              actor: SYSTEM,
              data: {
                agent_did: data.agent_did,
                agent_task_id: data.agent_task_id,
                attempts: RETRIES + 1,
                error,
              },
            }),
          )
      }
    },
    { pollingIntervalSeconds: 0.5, batchSize: 4 },
  )
}
