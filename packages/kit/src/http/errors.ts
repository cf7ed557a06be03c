import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.ts'

/** `api`: {"error": {"code", "message", "request_id"}} (rental, ledger). `oauth`: RFC 6749 §5.2 (idp). */
export type ErrorShape = 'api' | 'oauth'

const STATUS_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  417: 'expectation_failed',
  429: 'rate_limited',
  431: 'headers_too_large',
  // the client's fault though a 5XX: a protocol version this server does not speak
  505: 'http_version_not_supported',
}

const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
}

/** Fastify errors whose message would echo the URL back: a fixed message instead. */
const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_MAX_PARAM_LENGTH: 'a path parameter is too long',
  FST_ERR_BAD_URL: 'the URL is malformed',
}

/** PostgreSQL errors (from pg or PGlite) carry a severity and a five-character SQLSTATE. */
function isDatabaseError(err: unknown): err is { code: string } {
  if (typeof err !== 'object' || err === null || !('severity' in err)) return false
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
])

/**
 * The database is unreachable, went away mid-request, or did not answer in time: the client may
 * retry, so 503 rather than 500. SQLSTATE class 08 (connection exception), 53300 (too many
 * connections), 57014 (statement timeout), 57P01-57P03 (shutdown, cannot connect now); pg's own
 * messages for a lost, refused or silent connection.
 */
function isUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown }
  if (typeof e?.code === 'string') {
    if (UNREACHABLE.has(e.code) || e.code.startsWith('08')) return true
    if (['53300', '57014', '57P01', '57P02', '57P03'].includes(e.code)) return true
  }
  return (
    typeof e?.message === 'string' &&
    /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection is closed)/.test(
      e.message,
    )
  )
}

/** Maps anything thrown in a request to the status, code and message a client may see. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err
  if (isUnavailable(err))
    return new AppError(
      503,
      'unavailable',
      'the service cannot reach its database in time; try again shortly',
      {
        'retry-after': '5',
      },
    )
  if (isDatabaseError(err)) {
    if (err.code === '23505')
      return new AppError(409, 'conflict', 'a resource with the same unique value already exists')
    if (err.code === '23503')
      return new AppError(
        409,
        'conflict',
        'the request refers to a resource that does not exist or is still in use',
      )
    // class 22 (data exception): a value the client sent that the database cannot hold
    if (err.code.startsWith('22'))
      return new AppError(400, 'invalid_request', 'a value is malformed or out of range')
    return new AppError(500, 'internal_error', 'internal error')
  }
  const fastifyError = err as Partial<FastifyError>
  const status = fastifyError.statusCode
  if (fastifyError.validation)
    return new AppError(400, 'invalid_request', fastifyError.message ?? 'invalid request')
  if (err instanceof SyntaxError) return new AppError(400, 'invalid_json', 'the body is not valid JSON')
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = FASTIFY_CODES[fastifyError.code ?? ''] ?? STATUS_CODES[status] ?? 'invalid_request'
    const message = FASTIFY_MESSAGES[fastifyError.code ?? ''] ?? fastifyError.message ?? 'invalid request'
    return new AppError(status, code, message)
  }
  return new AppError(500, 'internal_error', 'internal error')
}

/** A failure of the server's own, whose message stays in its logs. */
const serverFault = (err: AppError) => err.status >= 500 && err.status !== 503 && err.status !== 505

function oauthCode(err: AppError): string {
  // RFC 6749 §4.1.2.1: the server cannot handle the request now, because of a temporary condition
  if (err.status === 503) return 'temporarily_unavailable'
  if (serverFault(err)) return 'server_error'
  if (err.code === 'invalid_json' || (STATUS_CODES[err.status] === err.code && err.status !== 404))
    return 'invalid_request'
  return err.code
}

export function errorBody(shape: ErrorShape, err: AppError, requestId: string): object {
  const message = serverFault(err) ? `internal error (request ${requestId})` : err.message
  if (shape === 'oauth') return { error: oauthCode(err), error_description: message, request_id: requestId }
  return { error: { code: err.code, message, request_id: requestId } }
}

export function sendError(
  shape: ErrorShape,
  err: AppError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value)
  return reply
    .code(err.status)
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send(errorBody(shape, err, request.id))
}

/** Validation messages that name the field: `body.amount must be integer`, `body has unknown field "x"`. */
export function formatValidationErrors(
  errors: ReadonlyArray<{ instancePath: string; message?: string; params?: Record<string, unknown> }>,
  dataVar: string,
): Error {
  const first = errors[0]
  if (!first) return new Error(`${dataVar} is invalid`)
  const where = dataVar + first.instancePath.replaceAll('/', '.')
  const params = first.params ?? {}
  let text: string
  if (typeof params.additionalProperty === 'string')
    text = `${where} has unknown field "${params.additionalProperty}"`
  else if (typeof params.missingProperty === 'string') text = `${where}.${params.missingProperty} is required`
  else if (Array.isArray(params.allowedValues))
    text = `${where} must be one of ${params.allowedValues.map(String).join(', ')}`
  // a form or query parameter sent twice arrives as an array (RFC 6749 §3.1: never more than once)
  else if (params.type === 'string' && (dataVar === 'querystring' || (dataVar === 'body' && params.form)))
    text = `${where} must be one string: a parameter must not be repeated`
  else text = `${where} ${first.message ?? 'is invalid'}`
  return new Error(text)
}
