import { randomBytes } from 'node:crypto'
import { AppError, afterCommit } from '@svc/kit'
import { canonicalize } from '@svc/trust/jcs'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type EngagementRow, hasMessagePart } from '../engagements/index.ts'
import { hasWebPolicy } from '../egress/index.ts'
import type { Actor } from '../events/index.ts'
import type { TaskService } from '../tasks/index.ts'
import { bearerOf } from './auth-modes.ts'
import { ToolServerError } from './mcp-client.ts'
import { actionView, CONNECTION_PART, type ConnectDeps, endAction, sha256 } from './service.ts'
import {
  type ActionRow,
  actionById,
  actionOf,
  type ConnectionRow,
  connectionOf,
  insertAction,
  insertTaskToken,
  noteHealth,
  taskTokenOf,
  updateAction,
} from './store.ts'

export const CALL_QUEUE = 'rental.connect.call'
/** The path an agent asks for tool calls at (its task's credential as a Bearer token). */
export const CALLS_PATH = '/api/connect/calls'
/** A result larger than this is kept as its hash only (the agent got it whole). */
const MAX_KEPT_RESULT = 64 * 1024

export interface CallDeps extends ConnectDeps {
  tasks: TaskService
}

const egressOptions = (deps: CallDeps, actor: Actor) => ({
  allowPrivate: deps.config.connect.allowPrivate,
  actor,
})

const hashOf = (value: unknown) => sha256(canonicalize(value ?? null))

/**
 * The credential a task's agent calls tools with: random, kept as its SHA-256, valid for
 * RENTAL_CONNECT_TOKEN_TTL_S and only while the task runs. Given (with the URLs to call) in the
 * message the agent gets, when the task's engagement has a connection or a web policy (the web
 * tool, `svc_web_url`). Both are known from the engagement's row as the task's run read it.
 */
export async function taskCredential(
  deps: CallDeps,
  task: { id: string; org_id: string; engagement_id: string | null },
  engagement: EngagementRow | undefined,
) {
  if (!task.engagement_id || engagement?.id !== task.engagement_id) return undefined
  const connected = hasMessagePart(engagement, CONNECTION_PART)
  // the web tool is offered once the client set a web policy for the engagement
  const web = hasWebPolicy(engagement)
  if (!connected && !web) return undefined
  const token = `tct_${randomBytes(32).toString('base64url')}`
  const now = deps.now()
  await insertTaskToken(
    deps.db,
    {
      token_sha256: sha256(token),
      task_id: task.id,
      org_id: task.org_id,
      engagement_id: task.engagement_id,
      expires_at: new Date(now.getTime() + deps.config.connect.tokenTtlS * 1000),
    },
    now,
  )
  const base = deps.baseUrl.replace(/\/+$/, '')
  return {
    svc_connect_url: `${base}${CALLS_PATH}`,
    svc_connect_token: token,
    ...(web ? { svc_web_url: `${base}/api/web/fetch` } : {}),
  }
}

const RUNNING = new Set(['submitted', 'working', 'input-required'])

export type Credential = Awaited<ReturnType<typeof taskOfCredential>>

/** The task behind a credential (a running one), or 401. */
export async function taskOfCredential(deps: CallDeps, authorization: string | undefined) {
  const match = /^Bearer (tct_[A-Za-z0-9_-]{43})$/.exec(authorization?.trim() ?? '')
  // looked up by the token's SHA-256: no comparison of the secret itself
  const row = match ? await taskTokenOf(deps.db, sha256(match[1]!)) : undefined
  if (!row || row.expires_at <= deps.now())
    throw rentalError(
      'invalid_tool_credential',
      'a running task’s tool-call credential is required (Bearer tct_…)',
    )
  const task = await deps.tasks.taskById(deps.db, row.task_id)
  if (!task || !RUNNING.has(task.state))
    throw rentalError(
      'invalid_tool_credential',
      `the task ${row.task_id} is not running: its credential has ended`,
    )
  return { ...row, agentDid: task.agent_did }
}

/**
 * An agent's tool call: the credential names the task (so the engagement and its connection); the
 * tool must be allowed by the binding; a tool the binding or the engagement's approval policy holds
 * waits for a member (202, an approval of kind tool_call); otherwise the call is made now with the
 * sealed key within the timeout. Every call made is a `tool.called` event and receipt.
 */
export async function requestCall(
  deps: CallDeps,
  credential: Credential,
  input: { tool: string; arguments?: Record<string, unknown> | undefined },
) {
  const args = input.arguments ?? {}
  const size = Buffer.byteLength(JSON.stringify(args), 'utf8')
  if (size > deps.config.connect.maxArgumentBytes)
    throw rentalError(
      'tool_arguments_too_large',
      `the arguments take ${size} bytes; at most ${deps.config.connect.maxArgumentBytes} are taken`,
    )
  const actor: Actor = { type: 'agent', id: credential.agentDid }
  // the egress policy first: a refused server is never connected to (403, recorded)
  const bound = await connectionOf(deps.db, credential.engagement_id)
  if (bound) await deps.egress.checkEgress(credential.engagement_id, bound.url, egressOptions(deps, actor))
  const id = `act_${randomBytes(12).toString('base64url')}`
  const outcome = await inTransaction(deps.db, async (trx) => {
    const connection = await connectionOf(trx, credential.engagement_id)
    if (!connection)
      throw rentalError('not_connected', `the engagement ${credential.engagement_id} has no connection`)
    const base = {
      id,
      org_id: credential.org_id,
      engagement_id: credential.engagement_id,
      connection_id: connection.id,
      task_id: credential.task_id,
      agent_did: credential.agentDid,
      tool: input.tool,
      arguments: args,
      arguments_sha256: hashOf(args),
      requested_at: deps.now(),
    }
    const allowed = connection.allowed.find((a) => a.name === input.tool)
    if (!allowed) {
      const known = connection.tools.some((t) => t.name === input.tool)
      const reason = known
        ? `the binding does not allow ${input.tool}`
        : `the tool server offers no tool ${input.tool} to this key`
      await insertAction(trx, { ...base, arguments: null, state: 'refused', reason, ended_at: deps.now() })
      await deps.events.record(trx, {
        orgId: base.org_id,
        type: 'tool.refused',
        stream: base.task_id,
        subjects: { action_id: id, task_id: base.task_id, engagement_id: base.engagement_id },
        actor,
        data: { tool: input.tool, arguments_sha256: base.arguments_sha256, reason },
      })
      return { refused: reason }
    }
    const policy = (await deps.engagements.configOf(trx, base.engagement_id)).approval
    if (allowed.approval === 'always' || policy.mode === 'always') {
      await insertAction(trx, { ...base, state: 'pending_approval' })
      const approvalId = await deps.approvals.requestToolCall(trx, {
        orgId: base.org_id,
        taskId: base.task_id,
        engagementId: base.engagement_id,
        actionId: id,
        tool: input.tool,
        argumentsSha256: base.arguments_sha256,
        preview: `${input.tool} ${JSON.stringify(args)}`,
        actor,
      })
      await updateAction(trx, id, { approval_id: approvalId })
      await deps.events.record(trx, {
        orgId: base.org_id,
        type: 'tool.held',
        stream: base.task_id,
        subjects: { action_id: id, task_id: base.task_id, approval_id: approvalId },
        actor,
        data: { tool: input.tool, arguments_sha256: base.arguments_sha256 },
      })
      return { held: true }
    }
    await insertAction(trx, { ...base, state: 'running', attempts: 1 })
    return { run: connection }
  })
  if ('refused' in outcome) throw rentalError('tool_refused', `${outcome.refused} (action ${id})`)
  if ('held' in outcome) return { status: 202 as const, action: actionView((await actionById(deps.db, id))!) }
  return { status: 200 as const, action: await makeCall(deps, outcome.run, id, actor) }
}

/** A call the task's agent asked for, as it stands now (its result once made); another task's is 404. */
export async function callOf(deps: CallDeps, credential: Credential, id: string) {
  const action = await actionById(deps.db, id)
  if (!action || action.task_id !== credential.task_id)
    throw rentalError('action_not_found', `no action ${id} of this task`)
  return actionView(action)
}

/**
 * Makes the call of a `running` action with the connection's sealed key and records its outcome:
 * completed (or failed: the tool's own error, or the server's), or timed_out when the server did
 * not answer in time (the connection cut). One transaction: the action, the connection's health,
 * the `tool.called` event and receipt (arguments and result as SHA-256 of their JCS form).
 */
async function makeCall(deps: CallDeps, connection: ConnectionRow, actionId: string, actor: Actor) {
  const action = (await actionById(deps.db, actionId))!
  const started = Date.now()
  let result: CallToolResult | undefined
  let failure: ToolServerError | undefined
  try {
    // an approved call made later: the egress policy may have changed since it was asked for
    const { addresses } = await deps.egress.checkEgress(
      connection.engagement_id,
      connection.url,
      egressOptions(deps, actor),
    )
    const bearer = await bearerOf(deps, connection)
    result = await deps.servers.callTool(
      connection.url,
      bearer,
      action.tool,
      action.arguments ?? {},
      addresses,
    )
  } catch (err) {
    if (err instanceof AppError && err.code === 'egress_refused')
      failure = new ToolServerError(`egress refused: ${err.message}`)
    else if (!(err instanceof ToolServerError)) throw err
    else failure = err
  }
  const latencyMs = Date.now() - started
  // a server refusing the idp's token: the next call asks the idp for another
  if (failure && !failure.timedOut && connection.resource) deps.tokens.invalidate(connection.resource)
  const now = deps.now()
  const state = failure
    ? failure.timedOut
      ? 'timed_out'
      : 'failed'
    : result!.isError
      ? 'failed'
      : 'completed'
  const resultSha256 = result ? hashOf(result) : null
  const kept = result && Buffer.byteLength(JSON.stringify(result)) <= MAX_KEPT_RESULT ? result : null
  const row = await inTransaction(deps.db, async (trx) => {
    await noteHealth(trx, connection.id, {
      ok: !failure,
      at: now,
      latencyMs,
      ...(failure ? { error: failure.message } : {}),
    })
    const data = {
      action_id: action.id,
      engagement_id: action.engagement_id,
      task_id: action.task_id,
      agent_did: action.agent_did,
      connection_id: connection.id,
      server_url_sha256: sha256(connection.url),
      tool: action.tool,
      arguments_sha256: action.arguments_sha256,
      result_sha256: resultSha256,
      outcome: state,
      approved_by: action.decided_by,
      latency_ms: latencyMs,
      attempt: action.attempts,
      requested_at: action.requested_at.toISOString(),
      called_at: now.toISOString(),
    }
    const receipt = await deps.receipts.record(trx, { type: 'tool.called', subject: action.id, data })
    await deps.events.record(trx, {
      orgId: action.org_id,
      type: 'tool.called',
      stream: action.task_id,
      subjects: { action_id: action.id, task_id: action.task_id, engagement_id: action.engagement_id },
      actor,
      data: {
        ...data,
        receipt_id: receipt.id,
        leaf_hash: receipt.leafHash,
        ...(failure ? { error: failure.message } : {}),
      },
    })
    return updateAction(trx, action.id, {
      state,
      reason: failure?.message ?? (result?.isError ? 'the tool answered an error' : null),
      result: kept,
      result_sha256: resultSha256,
      latency_ms: latencyMs,
      ended_at: now,
      receipt_id: receipt.id,
      receipt_leaf_hash: receipt.leafHash,
    })
  })
  return { ...actionView(row!), result: result ?? null }
}

/** A decision on a held call (the approvals area calls it in the decision's transaction). */
export async function decided(
  deps: CallDeps,
  trx: RentalDb,
  actionId: string,
  outcome: 'approved' | 'rejected' | 'expired',
  by: string | null,
  actor: Actor,
) {
  const action = await actionById(trx, actionId, true)
  if (!action || action.state !== 'pending_approval') return
  if (outcome !== 'approved') {
    const reason = outcome === 'rejected' ? `rejected by ${by}` : 'its approval expired'
    await endAction(deps, trx, action, { state: 'rejected', reason, decidedBy: by }, actor)
    return
  }
  await updateAction(trx, actionId, { state: 'approved', decided_by: by })
  await deps.jobs.enqueue(trx, CALL_QUEUE, { id: actionId })
  afterCommit(trx, () => deps.jobs.wake(CALL_QUEUE))
}

/** Runs an action that may run now (approved, or a refresh's re-run): marked running, then called. */
async function runNow(deps: CallDeps, action: ActionRow, from: ActionRow['state'][], actor: Actor) {
  const claimed = await inTransaction(deps.db, async (trx) => {
    const locked = await actionById(trx, action.id, true)
    if (!locked || !from.includes(locked.state)) return undefined
    const connection = await connectionOf(trx, locked.engagement_id)
    if (!connection || connection.id !== locked.connection_id) {
      if (locked.state === 'approved')
        await endAction(deps, trx, locked, { state: 'canceled', reason: 'the connection was revoked' }, actor)
      return { gone: locked.state }
    }
    await updateAction(trx, action.id, { state: 'running', attempts: locked.attempts + 1 })
    return { connection }
  })
  if (!claimed) return undefined
  if ('gone' in claimed)
    throw rentalError('not_connected', `the engagement ${action.engagement_id} has no connection`)
  return makeCall(deps, claimed.connection, action.id, actor)
}

/** The durable job an approval enqueues: the approved call is made (once: a later run finds it no longer approved). */
export async function startCalls(deps: CallDeps) {
  await deps.jobs.queue(CALL_QUEUE, { retryLimit: 3, retryDelay: 2, retryBackoff: true })
  await deps.jobs.work<{ id: string }>(
    CALL_QUEUE,
    async (data) => {
      const action = await actionById(deps.db, data.id)
      if (action?.state === 'approved')
        await runNow(deps, action, ['approved'], { type: 'system', id: null }).catch((err: unknown) => {
          if ((err as { code?: string }).code !== 'not_connected') throw err
        })
    },
    { pollingIntervalSeconds: 0.5 },
  )
}

/**
 * Refresh: an approved call not made yet is made now; a call already made is made again when its
 * tool is idempotent (read-only or idempotent by the server's annotations: a fresh outcome and a
 * new receipt); anything else is 409 naming why.
 */
export async function refresh(deps: CallDeps, orgId: string, id: string, actor: Actor) {
  const action = await actionOf(deps.db, orgId, id)
  if (!action) throw rentalError('action_not_found', `no action ${id}`)
  if (action.state === 'approved')
    return (await runNow(deps, action, ['approved'], actor)) ?? current(deps, id)
  if (!['completed', 'failed', 'timed_out'].includes(action.state))
    throw rentalError('action_not_refreshable', `the action ${id} is ${action.state}`)
  const connection = await connectionOf(deps.db, action.engagement_id)
  if (!connection || connection.id !== action.connection_id)
    throw rentalError('not_connected', `the engagement ${action.engagement_id} has no connection`)
  const tool = connection.tools.find((t) => t.name === action.tool)
  if (!tool?.annotations.idempotent)
    throw rentalError(
      'action_not_refreshable',
      `the action ${id} is ${action.state} and its tool ${action.tool} is not idempotent: it is not run again`,
    )
  return (await runNow(deps, action, ['completed', 'failed', 'timed_out'], actor)) ?? current(deps, id)
}

const current = async (deps: CallDeps, id: string) => ({
  ...actionView((await actionById(deps.db, id))!),
  result: null,
})
