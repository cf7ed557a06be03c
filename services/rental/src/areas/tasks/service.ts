import { afterCommit } from '@svc/kit'
import { agentInputHash, checkAgentArtifact } from '@svc/trust/agent-result'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import { newId } from '../engagements/bodies.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { FileService } from '../files/index.ts'
import { type Actor, type EventService, SYSTEM } from '../events/index.ts'
import type { MarketService } from '../market/index.ts'
import type { OutboxService } from '../outbox/index.ts'
import { admitTask } from './capacity.ts'
import { agentTaskStarted } from './agent-cancel.ts'
import type { AgentDispatcher, AgentReply } from './dispatch.ts'
import { endRunning, failedAttempt, refOf, taskEvents } from './events.ts'
import { filesOfRun, taskFiles } from './file-handoff.ts'
import { type ApprovalGate, awaitAgentInput, type TaskEndHook } from './gate.ts'
import {
  completeTask,
  endTask,
  insertTask,
  markWorking,
  setAsync,
  type TaskRow,
  taskById,
  taskOf,
} from './store.ts'
import { purgeOutputs } from './retention.ts'
import * as taskStore from './store.ts'
import { taskView } from './views.ts'

export const RUN_QUEUE = 'rental.tasks.run'

/** What the tasks' rules work with: the context, the services of the areas tasks need, the A2A dispatcher. */
export interface TaskDeps extends RentalContext {
  engagements: EngagementService
  catalogue: CatalogueService
  outbox: OutboxService
  events: EventService
  dispatcher: AgentDispatcher
  market: Pick<MarketService, 'checkCapacity'>
  /** The engagement's files a task hands its agent (file_ids). */
  files: Pick<FileService, 'ofEngagement' | 'open'>
  /** The approvals area's gate (handed over when it mounts; none holds anything before). */
  approvals: ApprovalGate
  /** What legal holds cover (handed over by the retention area; none before): their outputs are not purged. */
  held?: HeldScope
  /** More of the message's metadata for a task's run: the tool-call credential (areas/connect), a team task's delegation credential (areas/teams). */
  messageMetadata: Array<(task: TaskRow) => Promise<Record<string, string> | undefined>>
  /** Called in the task's transaction when an engagement's task fails, is canceled or rejected (areas/ending hands it over). */
  ended: TaskEndHook
}

/** The organizations and engagements legal holds cover now. */
export type HeldScope = () => Promise<{ orgs: string[]; engagements: string[] }>

/** What a new task is: its engagement and text; async runs it by a job, sync waits for it a while. */
export interface NewTask {
  engagement_id: string
  text: string
  async?: boolean | undefined
  /** Files of the engagement handed to the agent as A2A file parts (signed, short-lived URLs). */
  file_ids?: string[] | undefined
}

/**
 * A trial's free task (areas/trials): no engagement, no escrow, price 0, the trial's agent. The
 * trials area counts it against the trial in the `transaction` it passes (the trial row locked).
 */
export interface NewTrialTask {
  trial_id: string
  agent_did: string
  text: string
  async?: boolean | undefined
}

/**
 * How a new task's rows are written: `write` in a transaction. By default one of its own; a
 * schedule's tick writes them in the transaction that claims the tick (and learns the task's id).
 */
export type TaskTransaction = (taskId: string, write: (trx: RentalDb) => Promise<void>) => Promise<unknown>

export const terminal = (state: TaskRow['state']) =>
  state === 'completed' || state === 'failed' || state === 'canceled' || state === 'rejected'

/** The engagement a new task runs under: the organization's, and active. */
async function engagementForTask(deps: TaskDeps, subject: string, engagementId: string) {
  const engagement = await deps.engagements.engagementOf(subject, engagementId)
  if (!engagement) throw rentalError('engagement_not_found', `no engagement ${engagementId}`)
  checkTaskable(engagement.state)
  return engagement
}

/** 409 unless the engagement takes new tasks: `engagement_ended` once ended, else `engagement_not_active`. */
function checkTaskable(state: string) {
  if (state === 'ended')
    throw rentalError('engagement_ended', 'the engagement is ended: it takes no new task')
  if (state !== 'active')
    throw rentalError('engagement_not_active', `the engagement is ${state}: sign its SLA first`)
}

/**
 * A new task under an active engagement, with the escrow that pays for it: the engagement's first
 * task takes the package's escrow; each later task gets a new escrow body to sign. Async: a job
 * runs it. Sync: run here, waited for up to RENTAL_TASK_TIMEOUT_MS, then carried on by the job.
 * A trial's task (NewTrialTask) has neither engagement nor escrow, and is never held for approval.
 */
export async function createTask(
  deps: TaskDeps,
  subject: string,
  input: NewTask | NewTrialTask,
  actor: Actor,
  transaction: TaskTransaction = (_id, write) => inTransaction(deps.db, write),
) {
  const trialId = 'trial_id' in input ? input.trial_id : null
  const engagement =
    'engagement_id' in input ? await engagementForTask(deps, subject, input.engagement_id) : undefined
  const agentDid = engagement?.agent_did ?? (input as NewTrialTask).agent_did
  if (await deps.engagements.isRevoked(subject, agentDid))
    throw rentalError('agent_revoked', `you revoked ${agentDid}: it takes no new task`)
  if (engagement) await deps.engagements.checkTaskPrice(engagement)
  if (input.text.length === 0) throw rentalError('invalid_text', 'text is empty')
  const fileIds = 'file_ids' in input && input.file_ids?.length ? [...new Set(input.file_ids)] : []
  if (engagement && fileIds.length) await taskFiles(deps, subject, engagement.id, fileIds)
  const id = newId('tsk')
  const now = deps.now()
  const isAsync = input.async === true
  const price = engagement ? Number(engagement.price_fils) : 0
  let held = false
  await transaction(id, async (trx) => {
    if (engagement) {
      // the engagement row is locked: two first tasks cannot both take the package's escrow
      const locked = await deps.engagements.engagementOf(subject, engagement.id, { trx, lock: true })
      // an end committed since the check above: no task after it
      checkTaskable(locked?.state ?? 'ended')
      // capacity: the engagement's limits, counted under that lock (429 capacity_exceeded)
      await admitTask(deps, trx, engagement)
      // approvals: the engagement's policy may hold the task for a member's decision
      held = await deps.approvals.holds(trx, engagement, price)
    }
    // a limited listing's cap on the agent's running tasks, trial tasks too (429 listing_at_capacity)
    await deps.market.checkCapacity(trx, agentDid, () => taskStore.runningWith(trx, agentDid))
    const state = held ? 'input-required' : isAsync ? 'submitted' : 'working'
    await insertTask(trx, {
      id,
      engagement_id: engagement?.id ?? null,
      trial_id: trialId,
      org_id: subject,
      agent_did: agentDid,
      state,
      async: isAsync,
      price_fils: price,
      input_text: input.text,
      input_sha256: agentInputHash([input.text]),
      started_at: state === 'working' ? now : null,
      agent_version: engagement?.agent_version ?? null,
      file_ids: fileIds,
    })
    if (engagement) await deps.engagements.escrowForTask(trx, engagement, id, now)
    await deps.events.record(trx, {
      orgId: subject,
      type: 'task.created',
      stream: id,
      subjects: engagement
        ? { task_id: id, engagement_id: engagement.id }
        : { task_id: id, trial_id: trialId! },
      actor,
      data: { state, async: isAsync, price_fils: price, ...(trialId ? { trial: true } : {}) },
    })
    if (held && engagement)
      await deps.approvals.request(trx, {
        id,
        orgId: subject,
        engagementId: engagement.id,
        priceFils: price,
        text: input.text,
        actor,
      })
    else if (isAsync) {
      await deps.jobs.enqueue(trx, RUN_QUEUE, { task_id: id })
      afterCommit(trx, () => deps.jobs.wake(RUN_QUEUE))
    }
  })
  let note: string | undefined
  if (!isAsync && !held) note = await runWithin(deps, id, actor)
  const row = await taskOf(deps.db, subject, id)
  if (!row) throw rentalError('task_not_found', `no task ${id}`)
  const escrow = await deps.engagements.escrowOfTask(id)
  // the receipt was recorded a moment ago, in the task's transaction: not on the ledger yet
  const ledgerIndex = row.receipt_id ? await deps.outbox.ledgerIndexOf(row.receipt_id) : null
  return {
    task: await taskView(deps, row, { ledgerIndex, escrow }),
    escrow: escrow ? deps.engagements.escrowView(escrow) : null,
    ...(note ? { message: note } : {}),
  }
}

/** Runs a sync task for at most the timeout; past it (or on a failed attempt) the job carries on. */
async function runWithin(deps: TaskDeps, id: string, actor: Actor): Promise<string | undefined> {
  const startedAt = deps.now()
  const run = runTask(deps, id, 1, actor)
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), deps.config.taskTimeoutMs)
  })
  try {
    const outcome = await Promise.race([run.then(() => 'done' as const), timeout])
    if (outcome === 'done') return undefined
    run.catch((err: Error) => deps.log.warn({ err: err.message, task: id }, 'sync task run failed late'))
    const note = `the agent did not answer within ${deps.config.taskTimeoutMs} ms: the task continues asynchronously`
    await continueAsync(deps, id, note, actor)
    return note
  } catch (err) {
    await failedAttempt(deps, id, (err as Error).message, startedAt, actor)
    const note = 'the first attempt failed: the task is retried asynchronously'
    await continueAsync(deps, id, note, actor)
    return note
  } finally {
    clearTimeout(timer)
  }
}

async function continueAsync(deps: TaskDeps, id: string, note: string, actor: Actor) {
  await inTransaction(deps.db, async (trx) => {
    const task = await setAsync(trx, id)
    if (task) await taskEvents(deps.events).trace(trx, task, actor, { message: note })
    await deps.jobs.enqueue(trx, RUN_QUEUE, { task_id: id })
    afterCommit(trx, () => deps.jobs.wake(RUN_QUEUE))
  })
}

/**
 * One attempt: the agent is called over A2A and its signed result checked (signature, the
 * engagement's agent DID, the input and output hashes). A result that does not verify fails the
 * task for good (no receipt); a transport error throws, for the caller to retry.
 */
export async function runTask(
  deps: TaskDeps,
  id: string,
  attempt: number,
  actor: Actor = SYSTEM,
  reply?: AgentReply & { text: string },
): Promise<void> {
  const task = await taskById(deps.db, id)
  if (!task || terminal(task.state) || task.input_text === null) return
  const cardUrl = await deps.catalogue.cardUrl(task.agent_did)
  if (!cardUrl) throw new Error(`the agent ${task.agent_did} is not in the catalogue`)
  const events = taskEvents(deps.events)
  if (task.state === 'submitted')
    await inTransaction(deps.db, async (trx) => {
      if (await markWorking(trx, id, deps.now()))
        await events.stateChanged(trx, refOf(task), actor, { from: 'submitted', to: 'working', attempt })
    })
  // the task's files as A2A file parts, each a fresh signed URL (a deleted one fails the task)
  const files = await filesOfRun(deps, task, actor)
  if (!files) return
  let answer: Awaited<ReturnType<TaskDeps['dispatcher']['send']>>
  try {
    answer = await deps.dispatcher.send(
      cardUrl,
      reply?.text ?? task.input_text,
      AbortSignal.timeout(Math.max(deps.config.taskTimeoutMs, 5_000)),
      reply,
      // the agent version the engagement had accepted when the task was made, the tool-call credential
      await messageMetadata(deps, task),
      reply ? [] : files,
      // the agent's task, kept as soon as it is named: a cancel meanwhile reaches the agent
      (started) =>
        agentTaskStarted(deps, id, started.agentTaskId).catch((err: Error) =>
          deps.log.warn({ task: id, err: err.message }, 'agent task id not kept'),
        ),
    )
  } catch (err) {
    // the rental ended the task meanwhile (and told the agent, which stopped): not a failed attempt
    const now = await taskById(deps.db, id)
    if (now && terminal(now.state)) return
    throw err
  }
  if ('question' in answer) return awaitAgentInput(deps, id, answer)
  const check = checkAgentArtifact(answer.artifact, {
    agentDid: task.agent_did,
    inputTexts: [task.input_text],
  })
  await inTransaction(deps.db, async (trx) => {
    const locked = await taskById(trx, id, true)
    if (!locked || terminal(locked.state)) return
    const now = deps.now()
    // the agent's final A2A status, as a trace line (the rental calls the agent with blocking
    // SendMessage: its status updates are not streamed; docs/architecture.md says why)
    await events.trace(
      trx,
      refOf(locked),
      { type: 'agent', id: locked.agent_did },
      {
        attempt,
        agent_task_id: answer.agentTaskId,
        agent_state: answer.status.state,
        message: answer.status.message,
      },
    )
    if (!check.ok) {
      const error = `the agent's result does not verify: ${check.reason}`
      await endTask(trx, id, { state: 'failed', error, at: now })
      await events.stateChanged(trx, refOf(locked), actor, { from: locked.state, to: 'failed', error })
      await deps.ended(trx, { ...refOf(locked), state: 'failed' }, actor)
      deps.log.warn({ task: id, attempt, reason: check.reason }, 'agent result refused')
      return
    }
    const receipt = await complete(deps, trx, locked, {
      agentTaskId: answer.agentTaskId,
      data: check.data,
      text: answer.artifact.parts?.find((p) => typeof p.text === 'string')?.text ?? null,
      result: check.result,
      signature: answer.artifact.metadata?.svc_signature as string,
      now,
    })
    await events.stateChanged(trx, refOf(locked), actor, {
      from: locked.state,
      to: 'completed',
      receipt_id: receipt.id,
      leaf_hash: receipt.leafHash,
    })
  })
}

/** The message's metadata: the agent version the engagement had accepted when the task was made (null: the initial one), and what other areas add. */
async function messageMetadata(deps: TaskDeps, task: TaskRow) {
  const metadata = {
    ...(task.agent_version === null ? {} : { svc_agent_version: task.agent_version }),
  }
  for (const add of deps.messageMetadata) Object.assign(metadata, await add(task))
  return Object.keys(metadata).length ? metadata : undefined
}

/** Completes the task and records its `task.completed` receipt in the same transaction. */
async function complete(
  deps: TaskDeps,
  trx: RentalDb,
  task: TaskRow,
  done: {
    agentTaskId: string
    data: unknown
    text: string | null
    result: { output_sha256: string; input_sha256: string }
    signature: string
    now: Date
  },
) {
  // a trial's task: no engagement (and no client DID it signed with); the receipt says `trial: true`
  const engagement = task.engagement_id
    ? await deps.engagements.engagementOf(task.org_id, task.engagement_id, { trx })
    : undefined
  const receipt = await deps.receipts.record(trx, {
    type: 'task.completed',
    subject: task.id,
    data: {
      ...(engagement
        ? { engagement_id: task.engagement_id, client_did: engagement.client_did }
        : { trial_id: task.trial_id, org_id: task.org_id, trial: true }),
      task_id: task.id,
      agent_did: task.agent_did,
      input_sha256: task.input_sha256,
      output_sha256: done.result.output_sha256,
      price_fils: Number(task.price_fils),
      currency: 'AED',
      started_at: (task.started_at ?? task.created_at).toISOString(),
      completed_at: done.now.toISOString(),
      agent_result: done.result,
      agent_signature: done.signature,
    },
  })
  await completeTask(trx, task.id, {
    output: done.data,
    outputText: done.text,
    outputSha256: done.result.output_sha256,
    outputExpiresAt: new Date(
      done.now.getTime() +
        (task.engagement_id
          ? (await deps.engagements.configOf(trx, task.engagement_id)).output_ttl_s
          : deps.config.outputTtlS) *
          1000,
    ),
    agentTaskId: done.agentTaskId,
    agentResult: done.result,
    agentSignature: done.signature,
    receiptId: receipt.id,
    receiptLeafHash: receipt.leafHash,
    at: done.now,
  })
  return receipt
}

/** The async runner: each failed attempt is kept in `runs`; past the last retry the task fails. */
export async function startTaskRunner(deps: TaskDeps) {
  const retries = deps.config.taskRetries
  // a run lasts at most the agent call's bound: a crashed process's taken runs are retried soon after
  const expireInSeconds = Math.ceil(Math.max(deps.config.taskTimeoutMs, 5_000) / 1000) + 10
  await deps.jobs.queue(RUN_QUEUE, {
    retryLimit: retries,
    retryDelay: 1,
    retryBackoff: true,
    expireInSeconds,
  })
  // `reply`: the answer to the agent's question (an approved agent_input approval), on its A2A task
  await deps.jobs.work<{ task_id: string; reply?: AgentReply & { text: string } }>(
    RUN_QUEUE,
    async (data, job) => {
      const attempt = (job.retryCount ?? 0) + 1
      const startedAt = deps.now()
      try {
        await runTask(deps, data.task_id, attempt, SYSTEM, data.reply)
      } catch (err) {
        const message = (err as Error).message
        await failedAttempt(deps, data.task_id, message, startedAt, SYSTEM)
        if (attempt > retries) {
          const error = `gave up after ${attempt} attempts: ${message}`
          await inTransaction(deps.db, (trx) =>
            endRunning(deps, trx, data.task_id, { state: 'failed', error, at: deps.now() }, SYSTEM),
          )
          return
        }
        throw err
      }
    },
    // several runs at once: one slow agent does not hold up the others' tasks
    { pollingIntervalSeconds: 0.5, batchSize: 8 },
  )
  // outputs past their time are removed here (and on read)
  const sweep = setInterval(
    () =>
      void (async () => purgeOutputs(deps.db, deps.now(), undefined, await deps.held?.()))().catch(
        (err: Error) => deps.log.warn({ err: err.message }, 'output purge failed'),
      ),
    Math.min(deps.config.outputTtlS, 60) * 1000,
  )
  sweep.unref()
  return { stop: () => clearInterval(sweep) }
}

export type TaskFilter = taskStore.TaskFilter

/** A page of the owner's task ids, filtered (the A2A ListTasks), newest first, and the total. */
export const taskIdPage = (
  deps: TaskDeps,
  owner: string,
  filter: TaskFilter,
  limit: number,
  offset: number,
) => taskStore.taskIdPage(deps.db, owner, filter, limit, offset)
