/**
 * A2A's JSON-RPC binding on Fastify, over the SDK's transport handlers: 1.0 method names
 * (SendMessage, …) answer in the 1.0 JSON form, 0.3 names (message/send, …) in the 0.3 form.
 * Every JSON-RPC answer is HTTP 200 (errors are in the body, never a 5XX); streams are SSE.
 * Shared by the agents service (open agents) and the rental's A2A surface (Bearer tokens: the
 * caller authenticates first and passes its `user`; `mapError` maps its own errors).
 */
import { formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS, TaskState } from '@a2a-js/sdk'
import { isLegacyJsonRpcMethod, isV1JsonRpcMethod } from '@a2a-js/sdk/compat/v0_3'
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server'
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors'
import {
  type A2ARequestHandler,
  defaultServerCallContextBuilder,
  type ServerCallContext,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  type User,
} from '@a2a-js/sdk/server'
import type { FastifyReply, FastifyRequest } from 'fastify'

export interface JsonRpcEndpoint {
  v1: JsonRpcTransportHandler
  legacy: LegacyJsonRpcTransportHandler
  /** The media types the agent accepts in a message's parts (its card's defaultInputModes). */
  inputModes: readonly string[]
}

export const jsonRpcEndpoint = (
  handler: A2ARequestHandler,
  inputModes: readonly string[] = ['text/plain'],
): JsonRpcEndpoint => ({
  v1: new JsonRpcTransportHandler(handler),
  legacy: new LegacyJsonRpcTransportHandler(handler),
  inputModes,
})

type Id = string | number | null

/** A JSON-RPC error object. */
export interface JsonRpcErrorObject {
  code: number
  message: string
  data?: unknown[]
}

export interface JsonRpcOptions {
  /** The authenticated caller, passed to the request handler in its `ServerCallContext`. */
  user?: User
  /** Maps the caller's own errors; undefined leaves the error to the SDK's mapping. */
  mapError?: (err: unknown) => JsonRpcErrorObject | undefined
}
const SUPPORTED_VERSIONS = new Set(['1.0', '0.3'])
const SEND_METHODS = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream'])

/** Where a request handler keeps the error it throws, for the adapter's `mapError` (the SDK's transport maps errors itself). */
const THROWN = 'svc.a2a.thrown'

/** For request handlers: keeps `err` in the call's context for `mapError`, then throws it. */
export function rethrow(context: ServerCallContext, err: unknown): never {
  context.state.set(THROWN, err)
  throw err
}

export const errorInfo = (reason: string, metadata: Record<string, string> = {}) => ({
  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
  reason,
  domain: 'a2a-protocol.org',
  metadata,
})
/** google.rpc.RetryInfo: when to try again (a google.protobuf.Duration in its JSON form, "5s"). */
export const retryInfo = (seconds: number) => ({
  '@type': 'type.googleapis.com/google.rpc.RetryInfo',
  retryDelay: `${seconds}s`,
})
export const badRequest = (field: string, description: string) => ({
  '@type': 'type.googleapis.com/google.rpc.BadRequest',
  fieldViolations: [{ field, description }],
})

export function rpcError(id: Id, code: number, message: string, data?: unknown[]) {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } }
}

/** The request's id when it is a valid JSON-RPC id, else null (JSON-RPC 2.0 §5). */
export function idOf(body: Record<string, unknown>): Id {
  const id = body.id
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null
}

/** A part's media type: its own `mediaType` (0.3: a file's `mimeType`), else the one its kind implies. */
function mediaTypeOf(part: Record<string, unknown>): string {
  const file = part.file as { mimeType?: unknown } | undefined
  const given = typeof part.mediaType === 'string' ? part.mediaType : file?.mimeType
  if (typeof given === 'string' && given.trim()) return given.split(';')[0]!.trim().toLowerCase()
  if (typeof part.text === 'string') return 'text/plain'
  if ('data' in part) return 'application/json'
  return 'application/octet-stream'
}

/** A2A 1.0 §3.1.1: every part in a media type the agent accepts (ContentTypeNotSupported), one of them text. */
function checkParts(id: Id, params: unknown, inputModes: readonly string[]): object | undefined {
  const message = (params as { message?: { parts?: unknown } }).message
  const parts = Array.isArray(message?.parts) ? (message.parts as unknown[]) : undefined
  if (!parts?.length || parts.some((p) => !p || typeof p !== 'object' || Array.isArray(p)))
    return rpcError(id, A2A_ERROR_CODE.INVALID_PARAMS, 'Invalid parameters', [
      badRequest('message.parts', 'the message needs at least one part, each an object'),
    ])
  const objects = parts as Array<Record<string, unknown>>
  const refused = objects.map(mediaTypeOf).find((type) => !inputModes.includes(type))
  if (refused)
    return rpcError(
      id,
      A2A_ERROR_CODE.CONTENT_TYPE_NOT_SUPPORTED,
      `the agent does not accept ${refused} parts: ${inputModes.join(', ')}`,
      [
        errorInfo('CONTENT_TYPE_NOT_SUPPORTED', {
          mediaType: refused,
          supportedMediaTypes: inputModes.join(','),
        }),
      ],
    )
  if (!objects.some((p) => typeof p.text === 'string'))
    return rpcError(id, A2A_ERROR_CODE.INVALID_PARAMS, 'Invalid parameters', [
      badRequest('message.parts', 'the message needs at least one text part'),
    ])
  return undefined
}

/** ProtoJSON's TaskState: its name or its number; UNRECOGNIZED is what the SDK makes of anything else. */
const isTaskState = (value: unknown) =>
  value === null ||
  (typeof value === 'string' &&
    value !== 'UNRECOGNIZED' &&
    Number.isNaN(Number(value)) &&
    value in TaskState) ||
  (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value in TaskState)

/** Refusals before the SDK sees the request: parse errors, bad envelopes, unknown methods, bad parts. */
function precheck(
  raw: unknown,
  inputModes: readonly string[],
): { response: object } | { body: Record<string, unknown>; legacy: boolean } {
  let body: unknown
  try {
    body = typeof raw === 'string' ? JSON.parse(raw) : raw
  } catch {
    return {
      response: rpcError(null, A2A_ERROR_CODE.PARSE_ERROR, 'Invalid JSON payload', [
        errorInfo('PARSE_ERROR'),
      ]),
    }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const message = Array.isArray(body)
      ? 'Batch requests are not supported'
      : 'Request payload validation error'
    return {
      response: rpcError(null, A2A_ERROR_CODE.INVALID_REQUEST, message, [errorInfo('INVALID_REQUEST')]),
    }
  }
  const request = body as Record<string, unknown>
  const id = idOf(request)
  const validId = !('id' in request) || request.id === null || id !== null
  if (request.jsonrpc !== '2.0' || typeof request.method !== 'string' || !validId)
    return {
      response: rpcError(id, A2A_ERROR_CODE.INVALID_REQUEST, 'Request payload validation error', [
        badRequest('jsonrpc', 'a JSON-RPC 2.0 request has jsonrpc "2.0", a string method and an id'),
      ]),
    }
  const method = request.method
  const legacy = isLegacyJsonRpcMethod(method)
  if (!legacy && !isV1JsonRpcMethod(method))
    return {
      response: rpcError(id, A2A_ERROR_CODE.METHOD_NOT_FOUND, `Method not found: ${method}`, [
        errorInfo('METHOD_NOT_FOUND', { method }),
      ]),
    }
  const params = request.params
  if (
    method !== 'GetExtendedAgentCard' &&
    (typeof params !== 'object' || params === null || Array.isArray(params))
  )
    return {
      response: rpcError(id, A2A_ERROR_CODE.INVALID_PARAMS, 'Invalid parameters', [
        badRequest('params', 'params must be an object'),
      ]),
    }
  if (SEND_METHODS.has(method)) {
    const refused = checkParts(id, params, inputModes)
    if (refused) return { response: refused }
  }
  const status = (params as { status?: unknown } | undefined)?.status
  if (method === 'ListTasks' && status !== undefined && !isTaskState(status))
    return {
      response: rpcError(id, A2A_ERROR_CODE.INVALID_PARAMS, 'Invalid parameters', [
        badRequest('status', 'status must be a TaskState (TASK_STATE_SUBMITTED, …, or its number)'),
      ]),
    }
  return { body: request, legacy }
}

/** Custom JSON-RPC code (outside JSON-RPC's and A2A's reserved ranges) for a missing or refused credential. */
export const UNAUTHENTICATED_CODE = -31401

/** The request's JSON-RPC id when the raw body parses, for an answer given before the SDK sees it. */
export function rawId(raw: unknown): Id {
  try {
    const body: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw
    return body && typeof body === 'object' && !Array.isArray(body)
      ? idOf(body as Record<string, unknown>)
      : null
  } catch {
    return null
  }
}

/** RFC 9110 §5.5 / RFC 6750 §3: a quoted-string holds printable ASCII only, without `"` or `\`. */
const quotable = (text: string) => text.replace(/[^\x20-\x7e]|["\\]/g, '?')

/**
 * A2A §3.3.2 authentication error on the JSON-RPC binding: HTTP 401 with an RFC 6750 Bearer
 * challenge (`invalid_token` when a token was given) and a JSON-RPC error -31401 naming the scheme.
 */
export function refuseUnauthenticated(
  request: FastifyRequest,
  reply: FastifyReply,
  refusal: { realm: string; tokenGiven: boolean; message: string; scheme?: Record<string, string> },
) {
  const challenge = refusal.tokenGiven
    ? `Bearer realm="${refusal.realm}", error="invalid_token", error_description="${quotable(refusal.message)}"`
    : `Bearer realm="${refusal.realm}"`
  return reply
    .code(401)
    .header('www-authenticate', challenge)
    .send(
      rpcError(rawId(request.body), UNAUTHENTICATED_CODE, refusal.message, [
        errorInfo('UNAUTHENTICATED', { scheme: 'Bearer', ...refusal.scheme }),
      ]),
    )
}

const isStream = (value: unknown): value is AsyncGenerator<unknown> =>
  typeof (value as AsyncGenerator<unknown> | undefined)?.[Symbol.asyncIterator] === 'function'

export async function handleJsonRpc(
  endpoint: JsonRpcEndpoint,
  request: FastifyRequest,
  reply: FastifyReply,
  options: JsonRpcOptions = {},
): Promise<unknown> {
  const checked = precheck(request.body, endpoint.inputModes)
  if ('response' in checked) return reply.code(200).send(checked.response)
  const { body, legacy } = checked
  const id = idOf(body)
  const header = request.headers['a2a-version']
  const version = typeof header === 'string' && header.trim() ? header.trim() : legacy ? '0.3' : '1.0'
  if (!SUPPORTED_VERSIONS.has(version))
    return reply
      .code(200)
      .send(
        rpcError(
          id,
          A2A_ERROR_CODE.VERSION_NOT_SUPPORTED,
          `A2A version ${version} is not supported: 1.0, 0.3`,
          [errorInfo('VERSION_NOT_SUPPORTED', { requestedVersion: version, supportedVersions: '1.0,0.3' })],
        ),
      )
  const context = defaultServerCallContextBuilder({
    extensions: undefined,
    user: options.user ?? new UnauthenticatedUser(),
    headers: request.headers,
    requestedVersion: version,
  })
  const mapError = (err: unknown) =>
    options.mapError?.(err) ??
    (legacy
      ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err)
      : JsonRpcTransportHandler.mapToJSONRPCError(err))
  let answer: unknown
  try {
    answer = await (legacy ? endpoint.legacy : endpoint.v1).handle(body, context)
  } catch (err) {
    request.log.warn({ err }, 'JSON-RPC handler failed')
    return reply.code(200).send({ jsonrpc: '2.0', id, error: mapError(err) })
  }
  if (!isStream(answer)) {
    const thrown = context.state.get(THROWN)
    const mapped = thrown !== undefined ? options.mapError?.(thrown) : undefined
    if (mapped && answer && typeof answer === 'object' && 'error' in answer)
      answer = { ...(answer as object), error: mapped }
    return reply.code(200).send(answer)
  }

  // the first event decides: an error before it is a plain JSON-RPC error, not a stream
  const iterator = answer[Symbol.asyncIterator]()
  let first: IteratorResult<unknown>
  try {
    first = await iterator.next()
  } catch (err) {
    return reply.code(200).send({ jsonrpc: '2.0', id, error: mapError(err) })
  }
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, { ...SSE_HEADERS, 'x-request-id': request.id })
  let closed = false
  raw.on('close', () => {
    closed = true
  })
  try {
    if (!first.done) raw.write(formatSSEEvent(first.value))
    for (let next = await iterator.next(); !next.done && !closed; next = await iterator.next())
      raw.write(formatSSEEvent(next.value))
  } catch (err) {
    request.log.warn({ err }, 'A2A stream failed')
    if (!closed) raw.write(formatSSEErrorEvent({ jsonrpc: '2.0', id, error: mapError(err) }))
  } finally {
    if (closed) await iterator.return?.(undefined)
    raw.end()
  }
  return reply
}
