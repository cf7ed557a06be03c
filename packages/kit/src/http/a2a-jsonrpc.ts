/**
 * A2A's JSON-RPC binding on Fastify, over the SDK's transport handlers: 1.0 method names
 * (SendMessage, …) answer in the 1.0 JSON form, 0.3 names (message/send, …) in the 0.3 form.
 * Every JSON-RPC answer is HTTP 200 (errors are in the body, never a 5XX); streams are SSE.
 * Shared by the agents service (open agents) and the rental's A2A surface (Bearer tokens: the
 * caller authenticates first and passes its `user`; `mapError` maps its own errors).
 */
import { formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS } from '@a2a-js/sdk'
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
}

export const jsonRpcEndpoint = (handler: A2ARequestHandler): JsonRpcEndpoint => ({
  v1: new JsonRpcTransportHandler(handler),
  legacy: new LegacyJsonRpcTransportHandler(handler),
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

/** Refusals before the SDK sees the request: parse errors, bad envelopes, unknown methods, no text. */
function precheck(raw: unknown): { response: object } | { body: Record<string, unknown>; legacy: boolean } {
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
    const message = (params as { message?: { parts?: unknown } }).message
    const parts = Array.isArray(message?.parts)
      ? (message.parts as Array<Record<string, unknown>>)
      : undefined
    if (!parts?.some((p) => p && typeof p === 'object' && typeof p.text === 'string'))
      return {
        response: rpcError(id, A2A_ERROR_CODE.INVALID_PARAMS, 'Invalid parameters', [
          badRequest('message.parts', 'the message needs at least one text part'),
        ]),
      }
  }
  return { body: request, legacy }
}

const isStream = (value: unknown): value is AsyncGenerator<unknown> =>
  typeof (value as AsyncGenerator<unknown> | undefined)?.[Symbol.asyncIterator] === 'function'

export async function handleJsonRpc(
  endpoint: JsonRpcEndpoint,
  request: FastifyRequest,
  reply: FastifyReply,
  options: JsonRpcOptions = {},
): Promise<unknown> {
  const checked = precheck(request.body)
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
