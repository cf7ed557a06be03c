import { createHash, randomBytes } from 'node:crypto'
import type { Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { EngagementService } from '../engagements/index.ts'
import { type Actor, type EventService, SYSTEM } from '../events/index.ts'
import type { TaskService } from '../tasks/index.ts'
import type { ApprovalGate, HeldTask } from '../tasks/gate.ts'
import {
  type ApprovalRow,
  type ApprovalState,
  approvalById,
  approvalOf,
  approvalsOf,
  insertApproval,
  pendingOfTask,
  setReceipt,
  settle,
} from './store.ts'
import { decideToolCall, expireToolCall } from './tool-calls.ts'

export const EXPIRY_QUEUE = 'rental.approvals.expire'
/** How long an approval waits when the engagement's policy names no `expires_s`: 24 h. */
export const DEFAULT_EXPIRES_S = 86_400
const PREVIEW = 200

export interface ApprovalDeps extends RentalContext {
  tasks: TaskService
  engagements: EngagementService
  events: EventService
  /** The connect area's side of tool-call approvals (set when it mounts). */
}

/** Who decides: the member (its id, kept on the approval and named in the receipt) and the event's actor. */
export interface Decider {
  memberId: string
  actor: Actor
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/** The state readers see: a pending approval past its `expires_at` is expired, swept or not. */
export const stateOf = (row: ApprovalRow, now: Date): ApprovalState =>
  row.state === 'pending' && row.expires_at <= now ? 'expired' : row.state

export const approvalView = (row: ApprovalRow, now: Date) => ({
  id: row.id,
  kind: row.kind,
  state: stateOf(row, now),
  task_id: row.task_id,
  engagement_id: row.engagement_id,
  price_fils: Number(row.price_fils),
  currency: 'AED',
  text_sha256: row.text_sha256,
  text_preview: row.text_preview,
  question: row.question,
  agent_state: row.agent_state,
  requested_by: { type: row.requested_by_type, id: row.requested_by_id },
  requested_at: row.requested_at.toISOString(),
  expires_at: row.expires_at.toISOString(),
  decided_by: row.decided_by,
  decided_at: row.decided_at?.toISOString() ?? null,
  note: row.note,
  receipt: row.receipt_id ? { id: row.receipt_id, leaf_hash: row.receipt_leaf_hash } : null,
  action_id: row.action_id,
})
export type ApprovalView = ReturnType<typeof approvalView>

/** Writes a new approval with its `approval.requested` event and its expiry job, in the task's transaction. */
async function open(
  deps: ApprovalDeps,
  trx: RentalDb,
  task: HeldTask,
  agent?: { question: string; state: 'input-required' | 'auth-required'; taskId: string; contextId: string },
) {
  const id = `apr_${randomBytes(12).toString('base64url')}`
  const now = deps.now()
  const policy = (await deps.engagements.configOf(trx, task.engagementId)).approval
  const expiresAt = new Date(now.getTime() + (policy.expires_s ?? DEFAULT_EXPIRES_S) * 1000)
  const kind = agent ? 'agent_input' : 'policy'
  await insertApproval(trx, {
    id,
    org_id: task.orgId,
    task_id: task.id,
    engagement_id: task.engagementId,
    kind,
    state: 'pending',
    price_fils: task.priceFils,
    text_sha256: sha256(task.text),
    text_preview: task.text.slice(0, PREVIEW),
    question: agent?.question ?? null,
    agent_state: agent?.state ?? null,
    agent_task_id: agent?.taskId ?? null,
    agent_context_id: agent?.contextId ?? null,
    requested_by_type: task.actor.type,
    requested_by_id: task.actor.id,
    requested_at: now,
    expires_at: expiresAt,
  })
  await deps.events.record(trx, {
    orgId: task.orgId,
    type: 'approval.requested',
    stream: task.id,
    subjects: { approval_id: id, task_id: task.id, engagement_id: task.engagementId },
    actor: task.actor,
    data: {
      kind,
      price_fils: task.priceFils,
      expires_at: expiresAt.toISOString(),
      ...(agent ? { question: agent.question, agent_state: agent.state } : { mode: policy.mode }),
      task_state: 'input-required',
    },
  })
  await deps.jobs.enqueue(trx, EXPIRY_QUEUE, { id }, { startAfter: expiresAt })
}

/** The approvals' side of the tasks' gate (tasks/gate.ts). */
export const approvalGate = (deps: ApprovalDeps): ApprovalGate => ({
  holds(policy, priceFils) {
    if (policy.mode === 'always') return true
    return policy.mode === 'above_price' && priceFils > (policy.above_fils ?? Infinity)
  },
  request: (trx, task) => open(deps, trx, task),
  agentAsks: (trx, task, asks) =>
    open(
      deps,
      trx,
      {
        id: task.id,
        orgId: task.org_id,
        engagementId: task.engagement_id,
        priceFils: Number(task.price_fils),
        text: task.input_text ?? '',
        actor: { type: 'agent', id: task.agent_did },
      },
      { question: asks.question, state: asks.state, taskId: asks.agentTaskId, contextId: asks.contextId },
    ),
  async taskEnded(trx, taskId, state, actor) {
    const pending = await pendingOfTask(trx, taskId)
    if (pending) await close(deps, trx, pending, { state, by: null, actor, note: null, taskState: state })
  },
})

/**
 * Settles the approval, records its event (in the task's stream) and, for a decision or an expiry,
 * its receipt (subject the approval id; the note only as its SHA-256: receipts are public).
 */
export async function close(
  deps: ApprovalDeps,
  trx: RentalDb,
  row: ApprovalRow,
  how: {
    state: Exclude<ApprovalState, 'pending'>
    by: string | null
    actor: Actor
    note: string | null
    taskState: string
  },
) {
  const now = deps.now()
  const settled = await settle(trx, row.id, {
    state: how.state,
    decided_by: how.by,
    decided_at: now,
    note: how.note,
  })
  if (!settled) return undefined
  const data = {
    approval_id: row.id,
    task_id: row.task_id,
    engagement_id: row.engagement_id,
    kind: row.kind,
    price_fils: Number(row.price_fils),
    currency: 'AED',
    text_sha256: row.text_sha256,
    requested_at: row.requested_at.toISOString(),
    decided_at: now.toISOString(),
    decided_by: how.by,
    ...(how.note ? { note_sha256: sha256(how.note) } : {}),
  }
  await deps.events.record(trx, {
    orgId: row.org_id,
    type: `approval.${how.state}`,
    stream: row.task_id,
    subjects: { approval_id: row.id, task_id: row.task_id, engagement_id: row.engagement_id },
    actor: how.actor,
    data: { ...data, task_state: how.taskState },
  })
  if (how.state === 'canceled') return settled
  const receipt = await deps.receipts.record(trx, { type: `approval.${how.state}`, subject: row.id, data })
  await setReceipt(trx, row.id, receipt)
  return { ...settled, receipt_id: receipt.id, receipt_leaf_hash: receipt.leafHash }
}

export async function approvalList(
  deps: ApprovalDeps,
  orgId: string,
  filter: Page & { state?: ApprovalState | undefined },
) {
  const now = deps.now()
  const { rows, total } = await approvalsOf(deps.db, orgId, filter, now)
  return {
    approvals: rows.map((r) => approvalView(r, now)),
    total,
    limit: filter.limit,
    offset: filter.offset,
  }
}

export async function approvalDetail(deps: ApprovalDeps, orgId: string, id: string) {
  const row = await approvalOf(deps.db, orgId, id)
  if (!row) throw rentalError('approval_not_found', `no approval ${id}`)
  return approvalView(row, deps.now())
}

const notPending = (id: string, state: ApprovalState, why = '') =>
  rentalError('approval_not_pending', `the approval ${id} is ${state}${why}: it can no longer be decided`)

/**
 * Four eyes (the engagement's `approval.separate_approver`): the member who made the held task
 * (the approval's requester, a console user) cannot approve it; rejecting it stays theirs to do.
 */
async function checkSeparateApprover(
  deps: ApprovalDeps,
  trx: RentalDb,
  row: { engagement_id: string; requested_by_type: string; requested_by_id: string | null },
  who: Decider,
) {
  if (row.requested_by_type !== 'user' || row.requested_by_id === null) return
  if (who.actor.type !== 'user' || who.actor.id !== row.requested_by_id) return
  const { approval } = await deps.engagements.configOf(trx, row.engagement_id)
  if (approval.separate_approver === true)
    throw rentalError(
      'approval_self_decision',
      'the engagement’s approval policy asks for a separate approver: you made this task, another member approves it',
    )
}

/**
 * Approve or reject, in one transaction with the approval row locked: of concurrent decisions one
 * settles it, the others find it settled (409 naming its state). An approval past its time is
 * expired first (its own transaction, so the 409 does not undo it). Approving moves the task back
 * to `submitted` and enqueues its run (with the answer for the agent's question); rejecting ends it
 * as `rejected`. A task that ended meanwhile (revoked) cancels the approval instead.
 */
export async function decide(
  deps: ApprovalDeps,
  orgId: string,
  id: string,
  decision: { approve: boolean; note?: string | undefined; text?: string | undefined },
  who: Decider,
) {
  const outcome = await inTransaction(deps.db, async (trx) => {
    const row = await lockWithTask(deps, trx, id, orgId)
    if (!row) throw rentalError('approval_not_found', `no approval ${id}`)
    if (row.state !== 'pending') throw notPending(id, row.state)
    if (row.expires_at <= deps.now()) return { overdue: true as const }
    if (row.kind === 'tool_call') return { row: await decideToolCall(deps, trx, row, decision, who) }
    if (decision.text !== undefined && !(decision.approve && row.kind === 'agent_input'))
      throw rentalError('invalid_request', 'body.text answers an agent_input approval, and only on approve')
    if (decision.approve) await checkSeparateApprover(deps, trx, row, who)
    // the task is locked: a task that ended meanwhile (a revocation) cancels the approval instead
    const waiting = (await deps.tasks.stateOf(row.task_id, trx)) ?? 'gone'
    if (waiting !== 'input-required') {
      await close(deps, trx, row, {
        state: 'canceled',
        by: null,
        actor: SYSTEM,
        note: null,
        taskState: waiting,
      })
      return { ended: waiting }
    }
    // the decision, then what it does to the task (in the task's stream in that order)
    const how = { by: who.memberId, actor: who.actor, note: decision.note ?? null }
    const closed = decision.approve
      ? await close(deps, trx, row, { ...how, state: 'approved', taskState: 'submitted' })
      : await close(deps, trx, row, { ...how, state: 'rejected', taskState: 'rejected' })
    if (decision.approve) await deps.tasks.resume(trx, row.task_id, who.actor, reply(row, decision.text))
    else
      await deps.tasks.endWaiting(
        trx,
        row.task_id,
        {
          state: 'rejected',
          error: `the approval ${id} was rejected${decision.note ? `: ${decision.note}` : ''}`,
          at: deps.now(),
        },
        who.actor,
      )
    return { row: closed! }
  })
  if ('overdue' in outcome) {
    await expire(deps, id)
    throw notPending(id, 'expired')
  }
  if ('ended' in outcome) throw notPending(id, 'canceled', ` (its task is ${outcome.ended})`)
  return approvalView(outcome.row, deps.now())
}

/**
 * The approval locked after its task: a cancel and the runner lock the task row first and then the
 * approval, so every writer takes them in that order (never a deadlock between them).
 */
async function lockWithTask(deps: ApprovalDeps, trx: RentalDb, id: string, orgId?: string) {
  const peek = orgId === undefined ? await approvalById(trx, id) : await approvalOf(trx, orgId, id)
  if (!peek) return undefined
  await deps.tasks.taskById(trx, peek.task_id, true)
  return orgId === undefined ? approvalById(trx, id, true) : approvalOf(trx, orgId, id, true)
}

/** The answer to the agent's question, sent on its A2A task; "approved" when the member gave none. */
function reply(row: ApprovalRow, text: string | undefined) {
  if (row.kind !== 'agent_input' || !row.agent_task_id) return undefined
  return { text: text ?? 'approved', agentTaskId: row.agent_task_id, contextId: row.agent_context_id ?? '' }
}

/**
 * The expiry job's work (and a late decision's): a pending approval past its time ends `expired`
 * and its task `rejected` (never run, never charged), with event and receipt. A pending approval
 * whose task already ended otherwise (a revocation) is canceled. Anything else: nothing to do.
 */
export async function expire(deps: ApprovalDeps, id: string) {
  await inTransaction(deps.db, async (trx) => {
    const row = await lockWithTask(deps, trx, id)
    if (!row || row.state !== 'pending') return
    const now = deps.now()
    if (row.kind === 'tool_call') return expireToolCall(deps, trx, row, now)
    const waiting = (await deps.tasks.stateOf(row.task_id, trx)) === 'input-required'
    if (!waiting) {
      const taskState = (await deps.tasks.stateOf(row.task_id, trx)) ?? 'gone'
      await close(deps, trx, row, { state: 'canceled', by: null, actor: SYSTEM, note: null, taskState })
      return
    }
    if (row.expires_at > now) return
    await close(deps, trx, row, {
      state: 'expired',
      by: null,
      actor: SYSTEM,
      note: null,
      taskState: 'rejected',
    })
    await deps.tasks.endWaiting(
      trx,
      row.task_id,
      {
        state: 'rejected',
        error: `the approval ${id} expired at ${row.expires_at.toISOString()}: the task did not run`,
        at: now,
      },
      SYSTEM,
    )
  })
}

/** The durable expiry: one job per approval, due at its `expires_at` (enqueued with the approval). */
export async function startExpiry(deps: ApprovalDeps) {
  await deps.jobs.queue(EXPIRY_QUEUE, { retryLimit: 10, retryDelay: 2, retryBackoff: true })
  await deps.jobs.work<{ id: string }>(
    EXPIRY_QUEUE,
    async (data) => {
      await expire(deps, data.id)
      // the clock may lag the job's due time by a little: come back rather than leave it pending
      const row = await approvalById(deps.db, data.id)
      if (row?.state === 'pending' && row.expires_at > deps.now())
        await deps.jobs.enqueue(deps.db, EXPIRY_QUEUE, { id: data.id }, { startAfter: row.expires_at })
    },
    { pollingIntervalSeconds: 0.5 },
  )
}
