import { randomBytes } from 'node:crypto'
import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type Actor, SYSTEM } from '../events/index.ts'
import { type ApprovalDeps, close, DEFAULT_EXPIRES_S, type Decider, EXPIRY_QUEUE } from './service.ts'
import { type ApprovalRow, insertApproval } from './store.ts'

/**
 * A held tool call's decision, told to the connect area in the decision's transaction: it marks
 * the action approved (and schedules the call) or ends it.
 */
export interface ToolCallDecisions {
  decided(
    trx: RentalDb,
    actionId: string,
    outcome: 'approved' | 'rejected' | 'expired',
    by: string | null,
    actor: Actor,
  ): Promise<void>
}

export interface HeldToolCall {
  orgId: string
  taskId: string
  engagementId: string
  actionId: string
  tool: string
  argumentsSha256: string
  preview: string
  actor: Actor
}

/**
 * A tool call the engagement's policy holds: an approval of kind `tool_call` (its task keeps
 * running; the agent learns the outcome from the action), with its event and expiry job, in the
 * caller's transaction. Answers the approval's id.
 */
export async function requestToolCall(deps: ApprovalDeps, trx: RentalDb, call: HeldToolCall) {
  const id = `apr_${randomBytes(12).toString('base64url')}`
  const now = deps.now()
  const policy = (await deps.engagements.configOf(trx, call.engagementId)).approval
  const expiresAt = new Date(now.getTime() + (policy.expires_s ?? DEFAULT_EXPIRES_S) * 1000)
  await insertApproval(trx, {
    id,
    org_id: call.orgId,
    task_id: call.taskId,
    engagement_id: call.engagementId,
    kind: 'tool_call',
    state: 'pending',
    price_fils: 0,
    text_sha256: call.argumentsSha256,
    text_preview: call.preview.slice(0, 200),
    question: `May the agent call ${call.tool}?`,
    requested_by_type: call.actor.type,
    requested_by_id: call.actor.id,
    requested_at: now,
    expires_at: expiresAt,
    action_id: call.actionId,
  })
  await deps.events.record(trx, {
    orgId: call.orgId,
    type: 'approval.requested',
    stream: call.taskId,
    subjects: {
      approval_id: id,
      task_id: call.taskId,
      engagement_id: call.engagementId,
      action_id: call.actionId,
    },
    actor: call.actor,
    data: { kind: 'tool_call', tool: call.tool, expires_at: expiresAt.toISOString() },
  })
  await deps.jobs.enqueue(trx, EXPIRY_QUEUE, { id }, { startAfter: expiresAt })
  return id
}

/** Cancels a pending tool-call approval (its connection was revoked); nothing when it is settled. */
export async function cancelToolCall(deps: ApprovalDeps, trx: RentalDb, row: ApprovalRow, actor: Actor) {
  if (row.kind !== 'tool_call' || row.state !== 'pending') return
  await close(deps, trx, row, { state: 'canceled', by: null, actor, note: null, taskState: 'unchanged' })
}

/** Approve or reject a held tool call (the row is locked and pending, not past its time). */
export async function decideToolCall(
  deps: ApprovalDeps,
  trx: RentalDb,
  row: ApprovalRow,
  decision: { approve: boolean; note?: string | undefined; text?: string | undefined },
  who: Decider,
) {
  if (decision.text !== undefined)
    throw rentalError('invalid_request', 'body.text answers an agent_input approval, and only on approve')
  const state = decision.approve ? 'approved' : 'rejected'
  const closed = await close(deps, trx, row, {
    state,
    by: who.memberId,
    actor: who.actor,
    note: decision.note ?? null,
    taskState: 'unchanged',
  })
  for (const toolCalls of deps.reactions.all('approvals.toolCall'))
    await toolCalls.decided(trx, row.action_id!, state, who.memberId, who.actor)
  return closed!
}

/** A held tool call past its time: the approval expires and the action ends unrun. */
export async function expireToolCall(deps: ApprovalDeps, trx: RentalDb, row: ApprovalRow, now: Date) {
  if (row.expires_at > now) return
  await close(deps, trx, row, {
    state: 'expired',
    by: null,
    actor: SYSTEM,
    note: null,
    taskState: 'unchanged',
  })
  for (const toolCalls of deps.reactions.all('approvals.toolCall'))
    await toolCalls.decided(trx, row.action_id!, 'expired', null, SYSTEM)
}
