import { afterCommit, type Page } from '@svc/kit'
import { agentInputHash, checkAgentArtifact } from '@svc/trust/agent-result'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import { newId } from '../engagements/bodies.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { OutboxService } from '../outbox/index.ts'
import type { AgentDispatcher } from './dispatch.ts'
import {
  completeTask,
  endTask,
  insertTask,
  markWorking,
  purgeOutputs,
  recordFailedRun,
  setAsync,
  type TaskRow,
  taskById,
  taskOf,
  tasksOf,
} from './store.ts'
import * as taskStore from './store.ts'

export const RUN_QUEUE = 'rental.tasks.run'

/** What the tasks' rules work with: the context, the services of the areas tasks need, the A2A dispatcher. */
export interface TaskDeps extends RentalContext {
  engagements: EngagementService
  catalogue: CatalogueService
  outbox: OutboxService
  dispatcher: AgentDispatcher
}

export const terminal = (state: TaskRow['state']) =>
  state === 'completed' || state === 'failed' || state === 'canceled'

/** What a task's view reads besides its row: its receipt's ledger index and its escrow. */
interface Around {
  ledgerIndex: number | null
  escrow: { id: string } | undefined
}

/** The views of several tasks: their receipts and escrows read in one query each, not per task. */
async function taskViews(deps: TaskDeps, rows: TaskRow[]) {
  const [indexes, escrows] = await Promise.all([
    deps.outbox.ledgerIndexesOf(rows.flatMap((r) => (r.receipt_id ? [r.receipt_id] : []))),
    deps.engagements.escrowsOfTasks(rows.map((r) => r.id)),
  ])
  const views = []
  for (const row of rows)
    views.push(
      await taskView(deps, row, {
        ledgerIndex: row.receipt_id ? (indexes.get(row.receipt_id) ?? null) : null,
        escrow: escrows.get(row.id),
      }),
    )
  return views
}

export async function taskView(deps: TaskDeps, row: TaskRow, around: Around) {
  const now = deps.now()
  let output = row.output === null ? null : { text: row.output_text, data: row.output }
  if (output && row.output_expires_at && row.output_expires_at <= now) {
    await purgeOutputs(deps.db, now, row.id)
    output = null
  }
  const expired = row.state === 'completed' && output === null
  const { ledgerIndex, escrow } = around
  return {
    id: row.id,
    engagement_id: row.engagement_id,
    agent_did: row.agent_did,
    state: row.state,
    async: row.async,
    price_fils: Number(row.price_fils),
    currency: 'AED',
    escrow_id: escrow?.id ?? null,
    input_sha256: row.input_sha256,
    output,
    output_sha256: row.output_sha256,
    output_expires_at: row.output_expires_at?.toISOString() ?? null,
    output_expired: expired,
    ...(expired
      ? { message: 'the output is no longer kept (RENTAL_OUTPUT_TTL_S); the receipt and its hashes stay' }
      : {}),
    receipt: row.receipt_id
      ? {
          id: row.receipt_id,
          leaf_hash: row.receipt_leaf_hash,
          ledger_index: ledgerIndex,
        }
      : null,
    agent_result: row.agent_result,
    agent_signature: row.agent_signature,
    error: row.error,
    runs: row.runs as Array<{ attempt: number; at: string; error: string }> | null,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
  }
}
export type TaskView = Awaited<ReturnType<typeof taskView>>

export async function taskDetail(deps: TaskDeps, subject: string, id: string) {
  const row = await taskOf(deps.db, subject, id)
  if (!row) throw rentalError('task_not_found', `no task ${id}`)
  return (await taskViews(deps, [row]))[0]!
}

export async function taskList(deps: TaskDeps, subject: string, page: Page) {
  const rows = await tasksOf(deps.db, subject, page.limit, page.offset)
  return { tasks: await taskViews(deps, rows), limit: page.limit, offset: page.offset }
}

/**
 * A new task under an active engagement, with the escrow that pays for it: the engagement's first
 * task takes the package's escrow; each later task gets a new escrow body to sign. Async: a job
 * runs it. Sync: run here, waited for up to RENTAL_TASK_TIMEOUT_MS, then carried on by the job.
 */
export async function createTask(
  deps: TaskDeps,
  subject: string,
  input: { engagement_id: string; text: string; async?: boolean | undefined },
) {
  const engagement = await deps.engagements.engagementOf(subject, input.engagement_id)
  if (!engagement) throw rentalError('engagement_not_found', `no engagement ${input.engagement_id}`)
  if (engagement.state !== 'active')
    throw rentalError('engagement_not_active', 'the engagement is pending: sign its SLA first')
  if (await deps.engagements.isRevoked(subject, engagement.agent_did))
    throw rentalError('agent_revoked', `you revoked ${engagement.agent_did}: it takes no new task`)
  await deps.engagements.checkTaskPrice(engagement)
  if (input.text.length === 0) throw rentalError('invalid_text', 'text is empty')
  const id = newId('tsk')
  const now = deps.now()
  const isAsync = input.async === true
  await inTransaction(deps.db, async (trx) => {
    // the engagement row is locked: two first tasks cannot both take the package's escrow
    await deps.engagements.engagementOf(subject, engagement.id, { trx, lock: true })
    await insertTask(trx, {
      id,
      engagement_id: engagement.id,
      org_id: subject,
      agent_did: engagement.agent_did,
      state: isAsync ? 'submitted' : 'working',
      async: isAsync,
      price_fils: Number(engagement.price_fils),
      input_text: input.text,
      input_sha256: agentInputHash([input.text]),
      started_at: isAsync ? null : now,
    })
    await deps.engagements.escrowForTask(trx, engagement, id, now)
    if (isAsync) {
      await deps.jobs.enqueue(trx, RUN_QUEUE, { task_id: id })
      afterCommit(trx, () => deps.jobs.wake(RUN_QUEUE))
    }
  })
  let note: string | undefined
  if (!isAsync) note = await runWithin(deps, id)
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
async function runWithin(deps: TaskDeps, id: string): Promise<string | undefined> {
  const startedAt = deps.now()
  const run = runTask(deps, id, 1)
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), deps.config.taskTimeoutMs)
  })
  try {
    const outcome = await Promise.race([run.then(() => 'done' as const), timeout])
    if (outcome === 'done') return undefined
    run.catch((err: Error) => deps.log.warn({ err: err.message, task: id }, 'sync task run failed late'))
    await continueAsync(deps, id)
    return `the agent did not answer within ${deps.config.taskTimeoutMs} ms: the task continues asynchronously`
  } catch (err) {
    await recordFailedRun(deps.db, id, deps.now(), (err as Error).message, startedAt)
    await continueAsync(deps, id)
    return 'the first attempt failed: the task is retried asynchronously'
  } finally {
    clearTimeout(timer)
  }
}

async function continueAsync(deps: TaskDeps, id: string) {
  await inTransaction(deps.db, async (trx) => {
    await setAsync(trx, id)
    await deps.jobs.enqueue(trx, RUN_QUEUE, { task_id: id })
    afterCommit(trx, () => deps.jobs.wake(RUN_QUEUE))
  })
}

/**
 * One attempt: the agent is called over A2A and its signed result checked (signature, the
 * engagement's agent DID, the input and output hashes). A result that does not verify fails the
 * task for good (no receipt); a transport error throws, for the caller to retry.
 */
export async function runTask(deps: TaskDeps, id: string, attempt: number): Promise<void> {
  const task = await taskById(deps.db, id)
  if (!task || terminal(task.state) || task.input_text === null) return
  const agent = await deps.catalogue.agent(task.agent_did)
  if (!agent) throw new Error(`the agent ${task.agent_did} is not in the catalogue`)
  if (task.state === 'submitted') await markWorking(deps.db, id, deps.now())
  const answer = await deps.dispatcher.send(
    agent.card_url,
    task.input_text,
    AbortSignal.timeout(Math.max(deps.config.taskTimeoutMs, 5_000)),
  )
  const check = checkAgentArtifact(answer.artifact, {
    agentDid: task.agent_did,
    inputTexts: [task.input_text],
  })
  await inTransaction(deps.db, async (trx) => {
    const locked = await taskById(trx, id, true)
    if (!locked || terminal(locked.state)) return
    const now = deps.now()
    if (!check.ok) {
      await endTask(trx, id, {
        state: 'failed',
        error: `the agent's result does not verify: ${check.reason}`,
        at: now,
      })
      deps.log.warn({ task: id, attempt, reason: check.reason }, 'agent result refused')
      return
    }
    await complete(deps, trx, locked, {
      agentTaskId: answer.agentTaskId,
      data: check.data,
      text: answer.artifact.parts?.find((p) => typeof p.text === 'string')?.text ?? null,
      result: check.result,
      signature: answer.artifact.metadata?.svc_signature as string,
      now,
    })
  })
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
  const engagement = (await deps.engagements.engagementOf(task.org_id, task.engagement_id, { trx }))!
  const receipt = await deps.receipts.record(trx, {
    type: 'task.completed',
    subject: task.id,
    data: {
      engagement_id: task.engagement_id,
      task_id: task.id,
      agent_did: engagement.agent_did,
      client_did: engagement.client_did,
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
      done.now.getTime() + (await deps.engagements.configOf(trx, task.engagement_id)).output_ttl_s * 1000,
    ),
    agentTaskId: done.agentTaskId,
    agentResult: done.result,
    agentSignature: done.signature,
    receiptId: receipt.id,
    receiptLeafHash: receipt.leafHash,
    at: done.now,
  })
}

/** The async runner: each failed attempt is kept in `runs`; past the last retry the task fails. */
export async function startTaskRunner(deps: TaskDeps) {
  const retries = deps.config.taskRetries
  // a run lasts at most the agent call's bound: a crashed process's taken runs are retried soon after
  const expireInSeconds = Math.ceil(Math.max(deps.config.taskTimeoutMs, 5_000) / 1000) + 30
  await deps.jobs.queue(RUN_QUEUE, {
    retryLimit: retries,
    retryDelay: 1,
    retryBackoff: true,
    expireInSeconds,
  })
  await deps.jobs.work<{ task_id: string }>(
    RUN_QUEUE,
    async (data, job) => {
      const attempt = (job.retryCount ?? 0) + 1
      const startedAt = deps.now()
      try {
        await runTask(deps, data.task_id, attempt)
      } catch (err) {
        const message = (err as Error).message
        await recordFailedRun(deps.db, data.task_id, deps.now(), message, startedAt)
        if (attempt > retries) {
          const error = `gave up after ${attempt} attempts: ${message}`
          await endTask(deps.db, data.task_id, { state: 'failed', error, at: deps.now() }, { running: true })
          return
        }
        throw err
      }
    },
    { pollingIntervalSeconds: 0.5 },
  )
  // outputs past their time are removed here (and on read)
  const sweep = setInterval(
    () =>
      void purgeOutputs(deps.db, deps.now()).catch((err: Error) =>
        deps.log.warn({ err: err.message }, 'output purge failed'),
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
