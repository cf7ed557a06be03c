import { legacyJsonRpcToV1Method } from '@a2a-js/sdk/compat/v0_3'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Actor } from '../events/index.ts'

/** The type of the request record: one per S+C call and per mutating A2A call (docs/rental/events.md). */
export const REQUEST_EVENT = 'request.answered'

/**
 * Who called, as the route found it: set by a route that authenticates by itself (the A2A
 * surface, by its `agt_` token) for the audit hooks; S+C routes need not set it (their session is).
 */
export interface AuditCaller {
  actor: Actor
  orgId: string | null
  /** The body is a JSON-RPC call: only its mutating methods are recorded. */
  jsonRpc?: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    auditCaller: AuditCaller | null
    /** What the answer said, kept by the `preSerialization` hook for the record. */
    auditAnswer: AuditAnswer | null
  }
  interface FastifyContextConfig {
    /** Set by the audit area on every S+C route: each call of it is recorded. */
    audited?: boolean
  }
}

export interface AuditAnswer {
  /** The error code of a refusal: the API's `error.code`, or the JSON-RPC ErrorInfo reason (else its number). */
  errorCode: string | null
  /** The JSON-RPC error number, if any. */
  rpcCode?: number
  /** The task the call made (SendMessage's answer). */
  taskId?: string
}

/** A2A methods that change something (1.0 names; 0.3 names are mapped to them). */
const MUTATING = new Set([
  'SendMessage',
  'SendStreamingMessage',
  'CancelTask',
  'CreateTaskPushNotificationConfig',
  'DeleteTaskPushNotificationConfig',
])

const ID = /^[A-Za-z0-9_:.-]{1,200}$/

/** The 1.0 name of a JSON-RPC method the record keeps, or null (a read, or not a call at all). */
export function mutatingMethod(method: unknown): string | null {
  if (typeof method !== 'string' || method.length > 100) return null
  let name = method
  try {
    if (!MUTATING.has(name)) name = legacyJsonRpcToV1Method(method)
  } catch {
    return null
  }
  return MUTATING.has(name) ? name : null
}

/** The JSON-RPC call in a raw body (read after the answer was sent), or null. */
export function jsonRpcCall(raw: unknown): { method: string; params: Record<string, unknown> } | null {
  let body: unknown
  try {
    body = typeof raw === 'string' ? JSON.parse(raw) : raw
  } catch {
    return null
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null
  const { method, params } = body as { method?: unknown; params?: unknown }
  const name = mutatingMethod(method)
  if (!name) return null
  const p = params && typeof params === 'object' && !Array.isArray(params) ? params : {}
  return { method: name, params: p as Record<string, unknown> }
}

const idOrNull = (value: unknown) => (typeof value === 'string' && ID.test(value) ? value : null)

/** The ids a mutating A2A call is about: the task canceled or made, the engagement it names. */
export function rpcSubjects(call: { params: Record<string, unknown> }, answer: AuditAnswer | null) {
  const subjects: Record<string, string> = {}
  const message = call.params.message as
    { metadata?: Record<string, unknown>; contextId?: unknown } | undefined
  const engagement =
    idOrNull(message?.metadata?.engagement_id) ??
    idOrNull((call.params.metadata as Record<string, unknown> | undefined)?.engagement_id) ??
    idOrNull(message?.contextId)
  if (engagement) subjects.engagement_id = engagement
  const task = answer?.taskId ?? idOrNull(call.params.id) ?? idOrNull(call.params.taskId)
  if (task) subjects.task_id = task
  return subjects
}

/**
 * What an answer says, from the payload before it is serialized: the API error shape
 * `{error: {code}}` or a JSON-RPC answer `{jsonrpc, error: {code, data: [ErrorInfo]}}` / `{result}`.
 */
export function answerOf(payload: unknown): AuditAnswer | null {
  if (!payload || typeof payload !== 'object') return null
  const body = payload as { jsonrpc?: unknown; error?: unknown; result?: unknown }
  if (body.jsonrpc === '2.0') {
    const error = body.error as { code?: unknown; data?: unknown } | undefined
    if (error && typeof error === 'object') {
      const info = Array.isArray(error.data) ? (error.data[0] as { reason?: unknown } | undefined) : undefined
      const rpcCode = typeof error.code === 'number' ? error.code : undefined
      const reason = typeof info?.reason === 'string' ? info.reason : null
      return { errorCode: reason ?? (rpcCode === undefined ? null : String(rpcCode)), rpcCode }
    }
    const result = body.result as { id?: unknown; task?: { id?: unknown } } | undefined
    const taskId = idOrNull(result?.task?.id) ?? idOrNull(result?.id)
    return { errorCode: null, ...(taskId ? { taskId } : {}) }
  }
  const error = body.error as { code?: unknown } | undefined
  if (error && typeof error === 'object' && typeof error.code === 'string')
    return { errorCode: error.code.slice(0, 100) }
  return null
}

/** ok (2XX, 3XX and no JSON-RPC error), refused (4XX, or a JSON-RPC error the caller caused), failed (5XX). */
export function outcomeOf(status: number, answer: AuditAnswer | null): 'ok' | 'refused' | 'failed' {
  if (status >= 500) return 'failed'
  if (status >= 400) return 'refused'
  if (answer?.rpcCode !== undefined) return answer.rpcCode === -32603 ? 'failed' : 'refused'
  return 'ok'
}

/** The route's path parameters (ids: never secrets), each cut to 200 characters. */
export function paramsOf(request: FastifyRequest): Record<string, string> {
  const params = request.params
  if (!params || typeof params !== 'object') return {}
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(params as Record<string, unknown>).slice(0, 10))
    if (typeof value === 'string') out[name] = value.slice(0, 200)
  return out
}

/** The record's data: what was called and how it ended; never a body, a token or a cookie. */
export function requestData(
  request: FastifyRequest,
  reply: FastifyReply,
  extra: { rpcMethod?: string; params?: Record<string, string> },
) {
  const answer = request.auditAnswer
  const status = reply.statusCode
  return {
    method: request.method,
    route: request.routeOptions.url ?? null,
    ...(extra.params && Object.keys(extra.params).length ? { params: extra.params } : {}),
    ...(extra.rpcMethod ? { rpc_method: extra.rpcMethod } : {}),
    status,
    outcome: outcomeOf(status, answer),
    error_code: answer?.errorCode ?? null,
    ...(answer?.rpcCode !== undefined ? { rpc_code: answer.rpcCode } : {}),
    duration_ms: Math.round(reply.elapsedTime * 10) / 10,
  }
}
