import { createHash, randomBytes } from 'node:crypto'
import type { RentalContext } from '../../context.ts'
import { inTransaction } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { ApprovalService } from '../approvals/index.ts'
import type { EgressService } from '../egress/index.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import { authOf, type BindAuth, reach } from './auth-modes.ts'
import type { ToolInfo, ToolServers } from './mcp-client.ts'
import type { ResourceTokens } from './resource-tokens.ts'
import {
  type ActionRow,
  type ActionState,
  type AllowedTool,
  actionsOf,
  type ConnectionRow,
  connectionOf,
  connectionsOfOrg,
  deleteConnection,
  insertConnection,
  openActionsOf,
  updateAction,
} from './store.ts'

export interface ConnectDeps extends RentalContext {
  engagements: EngagementService
  events: EventService
  approvals: ApprovalService
  egress: EgressService
  servers: ToolServers
  tokens: ResourceTokens
}

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/** What a binding would allow by default: every tool the key reaches, the ones that may write held for approval. */
const defaultApproval = (tool: ToolInfo): AllowedTool['approval'] =>
  tool.annotations.read_only ? 'never' : 'always'

/** The last four characters of the key only: enough to tell keys apart, never enough to use one. */
const hintOf = (key: string) => `…${key.slice(-4)}`

export const connectionView = (row: ConnectionRow) => ({
  id: row.id,
  engagement_id: row.engagement_id,
  url: row.url,
  auth_mode: row.auth_mode,
  key_hint: row.key_hint,
  resource: row.resource,
  server: row.server_name ? { name: row.server_name, version: row.server_version } : null,
  allowed_tools: row.allowed,
  created_at: row.created_at.toISOString(),
  health: healthView(row),
})

const healthView = (row: ConnectionRow) => ({
  calls: row.calls,
  failures: row.failures,
  last_success_at: row.last_success_at?.toISOString() ?? null,
  last_error_at: row.last_error_at?.toISOString() ?? null,
  last_error: row.last_error,
  last_latency_ms: row.last_latency_ms,
})

export const actionView = (row: ActionRow) => ({
  id: row.id,
  engagement_id: row.engagement_id,
  connection_id: row.connection_id,
  task_id: row.task_id,
  agent_did: row.agent_did,
  tool: row.tool,
  arguments_sha256: row.arguments_sha256,
  state: row.state,
  reason: row.reason,
  approval_id: row.approval_id,
  approved_by: row.state === 'rejected' ? null : row.decided_by,
  decided_by: row.decided_by,
  result: row.result ?? null,
  result_sha256: row.result_sha256,
  latency_ms: row.latency_ms,
  attempts: row.attempts,
  requested_at: row.requested_at.toISOString(),
  ended_at: row.ended_at?.toISOString() ?? null,
  receipt: row.receipt_id ? { id: row.receipt_id, leaf_hash: row.receipt_leaf_hash } : null,
})

/** The organization's engagement, active (a connection is bound to a signed SLA only). */
async function ownEngagement(deps: ConnectDeps, orgId: string, id: string) {
  const engagement = await deps.engagements.engagementOf(orgId, id)
  if (!engagement) throw rentalError('engagement_not_found', `no engagement ${id}`)
  return engagement
}

/** The tools a binding would allow: those named (each must be reachable), else all with their default approval. */
function allowedOf(
  tools: ToolInfo[],
  wanted: Array<{ name: string; approval?: AllowedTool['approval'] | undefined }> | undefined,
) {
  if (!wanted) return tools.map((t) => ({ name: t.name, approval: defaultApproval(t) }))
  const seen = new Set<string>()
  return wanted.map((w) => {
    const tool = tools.find((t) => t.name === w.name)
    if (!tool) throw rentalError('tool_not_available', `the key does not reach a tool ${w.name}`)
    if (seen.has(w.name)) throw rentalError('invalid_request', `body.tools names ${w.name} twice`)
    seen.add(w.name)
    return { name: tool.name, approval: w.approval ?? defaultApproval(tool) }
  })
}

export interface BindInput {
  url: string
  api_key?: string | undefined
  auth?: BindAuth | undefined
  tools?: Array<{ name: string; approval?: AllowedTool['approval'] | undefined }> | undefined
}

/** Connects with the key and lists its tools, storing nothing: what a binding would allow. */
export async function preview(
  deps: ConnectDeps,
  orgId: string,
  engagementId: string,
  input: BindInput,
  actor: Actor,
) {
  await ownEngagement(deps, orgId, engagementId)
  const reached = await reach(deps, engagementId, input.url, authOf(input), actor)
  const allowed = allowedOf(reached.tools, input.tools)
  return {
    url: reached.url,
    resource: reached.resource,
    server: reached.server,
    tools: reached.tools.map((t) => {
      const allow = allowed.find((a) => a.name === t.name)
      return { ...t, would_allow: allow !== undefined, approval: allow?.approval ?? null }
    }),
    stored: false as const,
  }
}

/** The engagement's part of its tasks' message while it has a connection (areas/engagements message-parts.ts). */
export const CONNECTION_PART = 'connection'

/** Binds: the key checked against the server, then kept sealed with the tools allowed; an event in the same transaction. */
export async function bind(
  deps: ConnectDeps,
  orgId: string,
  engagementId: string,
  input: BindInput,
  actor: Actor,
) {
  const engagement = await ownEngagement(deps, orgId, engagementId)
  if (engagement.state !== 'active')
    throw rentalError('engagement_not_active', `the engagement ${engagementId} is ${engagement.state}`)
  if (await connectionOf(deps.db, engagementId))
    throw rentalError(
      'already_connected',
      `the engagement ${engagementId} is connected already: revoke it first`,
    )
  const auth = authOf(input)
  const reached = await reach(deps, engagementId, input.url, auth, actor)
  const allowed = allowedOf(reached.tools, input.tools)
  const id = `con_${randomBytes(12).toString('base64url')}`
  const now = deps.now()
  const row = await inTransaction(deps.db, async (trx) => {
    // the engagement locked: of two concurrent binds one finds the other's connection
    await deps.engagements.engagementOf(orgId, engagementId, { trx, lock: true })
    if (await connectionOf(trx, engagementId, true))
      throw rentalError(
        'already_connected',
        `the engagement ${engagementId} is connected already: revoke it first`,
      )
    await insertConnection(trx, {
      id,
      org_id: orgId,
      engagement_id: engagementId,
      url: reached.url,
      auth_mode: auth.type,
      // idp_resource: no secret at all, the resource its tokens are asked for
      key_sealed: auth.type === 'api_key' ? deps.sealer.seal(auth.api_key, `connection:${id}`) : null,
      key_hint: auth.type === 'api_key' ? hintOf(auth.api_key) : null,
      resource: reached.resource,
      server_name: reached.server?.name ?? null,
      server_version: reached.server?.version ?? null,
      tools: reached.tools,
      allowed,
      created_by: actor.id,
      created_at: now,
    })
    // the engagement's tasks get the tool-call credential from now: its row says so (no read per task)
    await deps.engagements.setMessagePart(trx, engagementId, CONNECTION_PART, true)
    await deps.events.record(trx, {
      orgId,
      type: 'connect.bound',
      stream: engagementId,
      subjects: { engagement_id: engagementId, connection_id: id },
      actor,
      data: { url: reached.url, auth_mode: auth.type, resource: reached.resource, allowed_tools: allowed },
    })
    return (await connectionOf(trx, engagementId))!
  })
  return connectionView(row)
}

export async function connectionOfEngagement(deps: ConnectDeps, orgId: string, engagementId: string) {
  await ownEngagement(deps, orgId, engagementId)
  const row = await connectionOf(deps.db, engagementId)
  if (!row) throw rentalError('not_connected', `the engagement ${engagementId} has no connection`)
  return connectionView(row)
}

/**
 * Revokes: the sealed key deleted with its row, and every action still waiting (held for approval,
 * or approved and not yet run) canceled with its approval, all in one transaction.
 */
export async function revoke(deps: ConnectDeps, orgId: string, engagementId: string, actor: Actor) {
  await ownEngagement(deps, orgId, engagementId)
  return inTransaction(deps.db, async (trx) => {
    // first: the engagement's row locked before the connection's, in the order a bind takes them
    await deps.engagements.setMessagePart(trx, engagementId, CONNECTION_PART, false)
    const row = await connectionOf(trx, engagementId, true)
    if (!row) throw rentalError('not_connected', `the engagement ${engagementId} has no connection`)
    const open = await openActionsOf(trx, engagementId)
    for (const action of open) {
      if (action.approval_id) await deps.approvals.cancelToolCall(trx, action.approval_id, actor)
      await endAction(deps, trx, action, { state: 'canceled', reason: 'the connection was revoked' }, actor)
    }
    await deleteConnection(trx, row.id)
    await deps.events.record(trx, {
      orgId,
      type: 'connect.revoked',
      stream: engagementId,
      subjects: { engagement_id: engagementId, connection_id: row.id },
      actor,
      data: { url: row.url, canceled_actions: open.map((a) => a.id) },
    })
    return { revoked: true as const, connection_id: row.id, canceled_actions: open.map((a) => a.id) }
  })
}

/** An action ends without a call (canceled, rejected, expired, refused after the fact), with its event. */
export async function endAction(
  deps: ConnectDeps,
  trx: Parameters<typeof updateAction>[0],
  action: ActionRow,
  end: { state: ActionState; reason: string; decidedBy?: string | null },
  actor: Actor,
) {
  const ended = await updateAction(trx, action.id, {
    state: end.state,
    reason: end.reason,
    arguments: null,
    ended_at: deps.now(),
    ...(end.decidedBy !== undefined ? { decided_by: end.decidedBy } : {}),
  })
  await deps.events.record(trx, {
    orgId: action.org_id,
    type: 'tool.ended',
    stream: action.task_id,
    subjects: { action_id: action.id, task_id: action.task_id, engagement_id: action.engagement_id },
    actor,
    data: {
      tool: action.tool,
      state: end.state,
      reason: end.reason,
      arguments_sha256: action.arguments_sha256,
    },
  })
  return ended
}

/** The engagement's connection (at most one) with its health, as a list. */
export async function connectionList(deps: ConnectDeps, orgId: string, engagementId: string) {
  await ownEngagement(deps, orgId, engagementId)
  const row = await connectionOf(deps.db, engagementId)
  return { connections: row ? [connectionView(row)] : [] }
}

/** The tools the key reached at bind, each with whether it is allowed and its approval. */
export async function toolList(deps: ConnectDeps, orgId: string, engagementId: string) {
  await ownEngagement(deps, orgId, engagementId)
  const row = await connectionOf(deps.db, engagementId)
  if (!row) throw rentalError('not_connected', `the engagement ${engagementId} has no connection`)
  return {
    tools: row.tools.map((t) => {
      const allow = row.allowed.find((a) => a.name === t.name)
      return { ...t, allowed: allow !== undefined, approval: allow?.approval ?? null }
    }),
  }
}

export async function actionList(
  deps: ConnectDeps,
  orgId: string,
  engagementId: string,
  page: { limit: number; offset: number },
  states?: ActionState[],
) {
  await ownEngagement(deps, orgId, engagementId)
  const { rows, total } = await actionsOf(deps.db, engagementId, { ...page, states })
  return { actions: rows.map(actionView), total, limit: page.limit, offset: page.offset }
}

/** Every connection of the organization with its health (the tenant console's /v1 helper reads it). */
export async function health(deps: ConnectDeps, orgId: string) {
  const rows = await connectionsOfOrg(deps.db, orgId)
  return rows.map((r) => ({ id: r.id, engagement_id: r.engagement_id, url: r.url, ...healthView(r) }))
}
