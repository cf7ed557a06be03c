import { createHash } from 'node:crypto'
import { annotateSpan, inSpan } from '@svc/kit'
import { checkAgentArtifact } from '@svc/trust/agent-result'
import { inTransaction, type RentalDb } from '../../db.ts'
import { type Actor, SYSTEM } from '../events/index.ts'
import { agentTaskStarted } from './agent-cancel.ts'
import { attemptFailed, enqueueRun, retryNote, type RunJob } from './attempts.ts'
import type { AgentReply } from './dispatch.ts'
import { refOf, taskEvents } from './events.ts'
import { filesOfRun } from './file-handoff.ts'
import { awaitAgentInput } from './gate.ts'
import { claimRun, handOver } from './lease-store.ts'
import { startLeases } from './leases.ts'
import { purgeOutputs } from './retention-store.ts'
import type { EngagementRow } from '../engagements/index.ts'
import { type EngagementTerms, RUN_QUEUE, type TaskDeps, terminal } from './service.ts'
import { markWorking } from './run-store.ts'
import { completeTask, endTask, type TaskRow, taskById } from './store.ts'
import type { App } from '@svc/kit'

/**
 * A task's run: the agent called over A2A (sync within a timeout, else by the durable job with
 * retries), its signed result checked, the task completed with its receipt in one transaction.
 */

/** How long an attempt may run: the agent call's bound (its lease adds what its writes may take). */
export const attemptBoundS = (deps: Pick<TaskDeps, 'config'>) =>
  Math.ceil(Math.max(deps.config.taskTimeoutMs, 5_000) / 1000)

/** A sync task's lease from its insert: its attempt, then the hand-over to the job, each bounded. */
export const syncLeaseS = (deps: Pick<TaskDeps, 'config'>) => attemptBoundS(deps) + 30

/**
 * Runs a sync task for at most the timeout; past it (or on a failed attempt) the job carries on.
 * Answers the completed row when the run completed it, or the note saying the task went on async.
 */
export async function runWithin(
  deps: TaskDeps,
  task: TaskRow,
  actor: Actor,
  terms?: EngagementTerms,
): Promise<{ completed?: TaskRow | undefined; note?: string }> {
  const { id } = task
  const startedAt = deps.now()
  const run = runTask(deps, id, 1, actor, undefined, task, terms)
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), deps.config.taskTimeoutMs)
  })
  try {
    const outcome = await Promise.race([run.then((completed) => ({ completed })), timeout])
    if (outcome !== 'timeout') return outcome
    run.catch((err: Error) => deps.log.warn({ err: err.message, task: id }, 'sync task run failed late'))
    const note = `the agent did not answer within ${deps.config.taskTimeoutMs} ms: the task continues asynchronously`
    await continueAsync(deps, id, note, actor)
    return { note }
  } catch (err) {
    const message = (err as Error).message
    const next = await attemptFailed(deps, { task_id: id }, 1, err, startedAt, actor)
    if (next === 'failed' || next === undefined) return {}
    return {
      note: next
        ? `the first attempt failed: the task is retried asynchronously (${retryNote(message, next)})`
        : 'the first attempt failed: the task is retried asynchronously',
    }
  } finally {
    clearTimeout(timer)
  }
}

/** The sync run hands its task to a job (its lease to the queue's), unless it ended meanwhile. */
async function continueAsync(deps: TaskDeps, id: string, note: string, actor: Actor) {
  await inTransaction(deps.db, async (trx) => {
    const task = await handOver(trx, id, deps.instance)
    if (!task) return
    await enqueueRun(deps, trx, { task_id: id })
    await taskEvents(deps.events).trace(trx, refOf(task), actor, { message: note })
  })
}

/** The task's row was not as its run knew it: the completion's transaction is rolled back. */
const CHANGED: unique symbol = Symbol('task changed')

/**
 * One attempt: the agent is called over A2A and its signed result checked (signature, the
 * engagement's agent DID, the input and output hashes). A result that does not verify fails the
 * task for good (no receipt); a transport error throws, for the caller to retry. Answers the
 * task's row when this attempt completed it. `written`: the row as its creation just wrote it;
 * `terms`: the engagement and config its creation read under the engagement's lock (the receipt's
 * client DID and the output's time to live come from them instead of another read).
 */
export async function runTask(
  deps: TaskDeps,
  id: string,
  attempt: number,
  actor: Actor = SYSTEM,
  reply?: AgentReply & { text: string },
  written?: TaskRow,
  terms?: EngagementTerms,
): Promise<TaskRow | undefined> {
  const task = written ?? (await taskById(deps.db, id))
  if (!task || terminal(task.state) || task.input_text === null) return
  annotateSpan({
    'svc.task.id': id,
    'svc.engagement.id': task.engagement_id ?? '',
    'svc.org.id': task.org_id,
  })
  // the engagement's terms with its agent's card URL: what the message needs, in one read (none
  // for a sync run, whose creation read them), and the completion's client DID and output TTL
  const known = await termsForRun(deps, task, terms)
  const cardUrl = known ? known.cardUrl : await deps.catalogue.cardUrl(task.agent_did)
  if (!cardUrl) throw new Error(`the agent ${task.agent_did} is not in the catalogue`)
  const events = taskEvents(deps.events)
  // the row as this run knows it: what its completion expects to find unchanged
  let expected: TaskRow = task
  if (task.state === 'submitted') {
    const at = deps.now()
    const moved = await inTransaction(deps.db, async (trx) => {
      if (!(await markWorking(trx, id, at))) return false
      await events.stateChanged(trx, refOf(task), actor, { from: 'submitted', to: 'working', attempt })
      return true
    })
    if (moved) expected = { ...task, state: 'working', started_at: at }
  }
  // the task's files as A2A file parts, each a fresh signed URL (a deleted one fails the task)
  const files = await filesOfRun(deps, task, actor)
  if (!files) return undefined
  let answer: Awaited<ReturnType<TaskDeps['dispatcher']['send']>>
  try {
    answer = await deps.dispatcher.send(
      cardUrl,
      reply?.text ?? task.input_text,
      AbortSignal.timeout(Math.max(deps.config.taskTimeoutMs, 5_000)),
      reply,
      // the agent version the engagement had accepted when the task was made, the tool-call credential
      await messageMetadata(deps, task, known?.engagement),
      reply ? [] : files,
      // the agent's task, kept once it is named and the agent works on: a cancel meanwhile
      // reaches the agent (an answer that names it is kept by the completion below)
      (started) =>
        agentTaskStarted(deps, id, started.agentTaskId).catch((err: Error) =>
          deps.log.warn({ task: id, err: err.message }, 'agent task id not kept'),
        ),
      messageIdOf(task, reply),
    )
  } catch (err) {
    // the rental ended the task meanwhile (and told the agent, which stopped): not a failed attempt
    const now = await taskById(deps.db, id)
    if (now && terminal(now.state)) return undefined
    throw err
  }
  if ('question' in answer) {
    await awaitAgentInput(deps, id, answer)
    return undefined
  }
  const check = inSpan('agent result signature check', { 'svc.task.id': id }, () =>
    checkAgentArtifact(answer.artifact, { agentDid: task.agent_did, inputTexts: [task.input_text!] }),
  )
  const finish = async (trx: RentalDb, locked: TaskRow, unlocked?: true) => {
    const now = deps.now()
    // the agent's final A2A status, as a trace line (the rental calls the agent with blocking
    // SendMessage: its status updates are not streamed; docs/rental/webhooks.md says why), written
    // with the state change in one statement
    const trace = {
      actor: { type: 'agent', id: locked.agent_did } as const,
      line: {
        attempt,
        agent_task_id: answer.agentTaskId,
        agent_state: answer.status.state,
        message: answer.status.message,
      },
    }
    if (!check.ok) {
      const error = `the agent's result does not verify: ${check.reason}`
      await endTask(trx, id, { state: 'failed', error, at: now, cause: 'agent' })
      await events.traceAndChange(trx, refOf(locked), trace, {
        actor,
        change: { from: locked.state, to: 'failed', error },
      })
      await deps.ended(trx, { ...refOf(locked), state: 'failed' }, actor)
      deps.log.warn({ task: id, attempt, reason: check.reason }, 'agent result refused')
      deps.metrics?.ended('failed', locked.created_at, now)
      return undefined
    }
    const { receipt, completed } = await complete(deps, trx, locked, known, unlocked, {
      agentTaskId: answer.agentTaskId,
      data: check.data,
      text: answer.artifact.parts?.find((p) => typeof p.text === 'string')?.text ?? null,
      result: check.result,
      signature: answer.artifact.metadata?.svc_signature as string,
      now,
    })
    await events.traceAndChange(trx, refOf(locked), trace, {
      actor,
      change: { from: locked.state, to: 'completed', receipt_id: receipt.id, leaf_hash: receipt.leafHash },
    })
    deps.metrics?.ended('completed', locked.created_at, now)
    return completed
  }
  // a verified result completes the row as this run knows it without a locking read first: its
  // update is conditional, and a row changed meanwhile (ended, retried) rolls that back and takes
  // the locked path below, which settles on the same outcome as before
  if (check.ok) {
    const done = await inTransaction(deps.db, (trx) => finish(trx, expected, true)).catch(
      (err: unknown): typeof CHANGED => {
        if (err === CHANGED) return CHANGED
        throw err
      },
    )
    if (done !== CHANGED) return done
  }
  return inTransaction(deps.db, async (trx) => {
    const locked = await taskById(trx, id, true)
    if (!locked || terminal(locked.state)) return undefined
    return finish(trx, locked)
  })
}

/**
 * The A2A message id of an attempt's message: the same for every attempt of one run (a retry, a
 * run taken back after a fault), so that an agent may deduplicate a message it got before; another
 * for a run the client retried, or for each answer to the agent's question. A UUID made of a hash.
 */
export function messageIdOf(task: Pick<TaskRow, 'id' | 'run_round'>, reply?: AgentReply & { text: string }) {
  const seed = `${task.id}\n${task.run_round}\n${reply ? `${reply.agentTaskId}\n${reply.text}` : ''}`
  const hex = createHash('sha256').update(seed).digest('hex')
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/**
 * The terms of the task's engagement with its agent's card URL: those its creation read (a sync
 * run), else read now; undefined for a trial's task (no engagement).
 */
async function termsForRun(deps: TaskDeps, task: TaskRow, terms: EngagementTerms | undefined) {
  if (!task.engagement_id) return undefined
  if (terms?.engagement.id === task.engagement_id && terms.cardUrl !== undefined)
    return terms as EngagementTerms & { cardUrl: string | null }
  const read = await deps.engagements.termsOf(task.org_id, task.engagement_id, { cardUrl: true })
  if (!read) throw new Error(`the engagement ${task.engagement_id} of the task ${task.id} is not found`)
  return read as EngagementTerms & { cardUrl: string | null }
}

/**
 * The message's metadata: the agent version the engagement had accepted when the task was made
 * (null: the initial one), and what other areas add, each from the engagement as the run read it.
 */
async function messageMetadata(deps: TaskDeps, task: TaskRow, engagement: EngagementRow | undefined) {
  const metadata = {
    ...(task.agent_version === null ? {} : { svc_agent_version: task.agent_version }),
  }
  // each area's part at once (an area that adds nothing answers without a read)
  for (const more of await Promise.all(deps.messageMetadata.map((add) => add(task, engagement))))
    Object.assign(metadata, more)
  return Object.keys(metadata).length ? metadata : undefined
}

/** Completes the task and records its `task.completed` receipt in the same transaction. */
async function complete(
  deps: TaskDeps,
  trx: RentalDb,
  task: TaskRow,
  known: EngagementTerms | undefined,
  unlocked: true | undefined,
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
  const terms = !task.engagement_id
    ? undefined
    : known?.engagement.id === task.engagement_id
      ? known
      : await deps.engagements.termsOf(task.org_id, task.engagement_id, { trx })
  const engagement = terms?.engagement
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
  // unlocked: only if the row's state and start are still `task`'s (else CHANGED)
  const completed = await completeTask(trx, task.id, unlocked && task, {
    output: done.data,
    outputText: done.text,
    outputSha256: done.result.output_sha256,
    outputExpiresAt: new Date(
      done.now.getTime() + (terms?.config.output_ttl_s ?? deps.config.outputTtlS) * 1000,
    ),
    agentTaskId: done.agentTaskId,
    agentResult: done.result,
    agentSignature: done.signature,
    receiptId: receipt.id,
    receiptLeafHash: receipt.leafHash,
    at: done.now,
  })
  if (!completed) throw CHANGED
  return { receipt, completed }
}

/**
 * The async runner: a job is one attempt (attempts.ts). It takes the task's lease first: a job that
 * is no longer the task's run (a stale one, after the task was taken back) does nothing. A failed
 * attempt is kept in `runs` and the next queued after a backoff; past the last retry the task fails.
 */
export async function startTaskRunner(app: App, deps: TaskDeps) {
  // a run lasts at most the agent call's bound: its lease is that and the writes around it
  const leaseS = attemptBoundS(deps) + 10
  // retries of the queue itself are for faults only (the database): an attempt's failure is a new job
  await deps.jobs.queue(RUN_QUEUE, {
    retryLimit: 10,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: leaseS,
  })
  await deps.jobs.work<RunJob>(
    RUN_QUEUE,
    async (data, job) => {
      // a fault's retry of this job counts as another attempt; jobs made before leases count as before
      const attempt = (data.attempt ?? 1) + (job.retryCount ?? 0)
      const claimed = await claimRun(deps.db, data.task_id, job.id, deps.instance, leaseS)
      if (!claimed) return
      const startedAt = deps.now()
      try {
        await runTask(deps, data.task_id, attempt, SYSTEM, data.reply, claimed)
      } catch (err) {
        await attemptFailed(deps, data, attempt, err, startedAt, SYSTEM)
      }
    },
    // several runs at once: one slow agent does not hold up the others' tasks
    { pollingIntervalSeconds: 0.5, batchSize: 8 },
  )
  const leases = startLeases(app, deps)
  // outputs past their time are removed here (and on read)
  const sweep = setInterval(
    () =>
      void (async () => purgeOutputs(deps.db, deps.now(), undefined, await deps.held?.()))().catch(
        (err: Error) => deps.log.warn({ err: err.message }, 'output purge failed'),
      ),
    Math.min(deps.config.outputTtlS, 60) * 1000,
  )
  sweep.unref()
  return {
    stop: async () => {
      clearInterval(sweep)
      await leases.stop()
    },
  }
}
