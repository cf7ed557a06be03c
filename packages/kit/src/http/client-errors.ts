import { randomBytes } from 'node:crypto'
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { AppError } from '../errors.ts'
import { type ErrorShape, errorBody } from './errors.ts'

/**
 * Requests Node answers before any route or hook runs: what its parser (llhttp) refuses, a request
 * timeout, an `Expect` it does not meet, `CONNECT`. Node and Fastify answer them with bodies of their
 * own (or none); these answer them in the service's error shape, with the connection closed when the
 * parser cannot tell where the next request starts.
 */

export const newRequestId = () => `req_${randomBytes(12).toString('base64url')}`

/** An error Node's HTTP server reports on a connection (`clientError`): llhttp's code and reason. */
export interface ClientError extends Error {
  code?: string
  reason?: string
  rawPacket?: unknown
}

const bad = (message: string) => new AppError(400, 'invalid_request', message)

/** llhttp's error codes (HPE_*), as what the client did wrong. */
const PARSER_ERRORS: Record<string, (reason: string) => AppError> = {
  HPE_HEADER_OVERFLOW: () =>
    new AppError(431, 'headers_too_large', 'the request line and headers are larger than 16 KB in all'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: () =>
    new AppError(413, 'payload_too_large', 'a chunk’s extensions are larger than 16 KB'),
  HPE_INVALID_METHOD: () => bad('the request method is not one this server knows'),
  HPE_INVALID_URL: (reason) => bad(`the request target is not a valid URL: ${reason}`),
  HPE_INVALID_CONSTANT: (reason) => bad(`the request line is not METHOD target HTTP/1.1: ${reason}`),
  HPE_INVALID_HEADER_TOKEN: (reason) => bad(`a header is malformed: ${reason}`),
  HPE_INVALID_CONTENT_LENGTH: (reason) => bad(`the Content-Length is not a number of bytes: ${reason}`),
  HPE_UNEXPECTED_CONTENT_LENGTH: (reason) =>
    bad(`the Content-Length cannot be used (request smuggling is refused): ${reason}`),
  HPE_INVALID_TRANSFER_ENCODING: (reason) =>
    bad(`the Transfer-Encoding cannot be used (request smuggling is refused): ${reason}`),
  HPE_INVALID_CHUNK_SIZE: (reason) => bad(`the chunked body is malformed: ${reason}`),
}

/** What Node reported on a connection, as the error the client is answered with. */
export function clientErrorOf(err: ClientError): AppError {
  const reason = err.reason ?? err.message
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new AppError(408, 'request_timeout', 'the request did not arrive whole in time')
  const raw = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.subarray(0, 16).toString('latin1') : ''
  // a TLS ClientHello (a handshake record) or HTTP/2 with prior knowledge, sent to this plain HTTP/1.1 port
  if (raw.startsWith('\x16\x03')) return bad('this port speaks plain HTTP, not TLS')
  if (raw.startsWith('PRI * HTTP/2.0')) return bad('this port speaks HTTP/1.1; HTTP/2 is not served')
  if (err.code === 'HPE_INVALID_VERSION')
    // llhttp's reason for a well-formed HTTP/d.d it does not speak; other reasons are a malformed line
    return reason === 'Invalid HTTP version'
      ? new AppError(505, 'http_version_not_supported', 'this server speaks HTTP/1.0 and HTTP/1.1')
      : bad(`the request line is malformed (lines end with CRLF): ${reason}`)
  const known = err.code ? PARSER_ERRORS[err.code] : undefined
  return known ? known(reason) : bad(`the request cannot be parsed: ${reason}`)
}

function headersFor(err: AppError, requestId: string, length: number): Record<string, string> {
  return {
    ...err.headers,
    'x-request-id': requestId,
    'cache-control': 'no-store',
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(length),
    connection: 'close',
  }
}

/** How long a refused connection is drained for the peer to read the answer before it is dropped. */
const LINGER_MS = 2_000

/**
 * Answers on a socket no response object owns, then closes it. The rest of what the client sends is
 * read and dropped meanwhile: closing with unread input would reset the connection, and the client
 * could lose the answer.
 */
function answerOnSocket(socket: Duplex, shape: ErrorShape, err: AppError): void {
  const requestId = newRequestId()
  const body = JSON.stringify(errorBody(shape, err, requestId))
  const headers = headersFor(err, requestId, Buffer.byteLength(body))
  const head = [`HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}`]
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`)
  socket.on('error', () => {})
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`)
  socket.resume()
  setTimeout(() => socket.destroy(), LINGER_MS).unref()
}

type InFlight = { _httpMessage?: ServerResponse | null }

/** Fastify's `clientErrorHandler`: what Node reports on a connection, answered in the service's shape. */
export function clientErrorHandler(shape: ErrorShape, log: FastifyBaseLogger) {
  return (err: ClientError, socket: Duplex): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed || socket.writableEnded) return
    const refusal = clientErrorOf(err)
    log.info({ code: err.code, reason: err.reason, status: refusal.status }, 'malformed request refused')
    const inFlight = (socket as Duplex & InFlight)._httpMessage
    if (!inFlight?.headersSent) return answerOnSocket(socket, shape, refusal)
    // A response is under way: an answer now would corrupt it. It answers a request before this one
    // (pipelining: this one is answered after it), or this very one, whose body broke (then only closed).
    const pipelined = inFlight.req.complete
    inFlight.once('close', () => {
      if (pipelined && inFlight.writableFinished && !socket.writableEnded)
        answerOnSocket(socket, shape, refusal)
      else socket.destroy()
    })
  }
}

function answer(res: ServerResponse, shape: ErrorShape, err: AppError): void {
  const requestId = newRequestId()
  const body = JSON.stringify(errorBody(shape, err, requestId))
  res.writeHead(err.status, headersFor(err, requestId, Buffer.byteLength(body)))
  res.end(body)
}

/** The requests Node's server answers by itself unless someone listens: `Expect` and `CONNECT`. */
export function answerUnservedRequests(server: Server, shape: ErrorShape): void {
  // RFC 9110 §10.1.1: an expectation other than 100-continue (which Node meets) is not met
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) =>
    answer(res, shape, new AppError(417, 'expectation_failed', 'only Expect: 100-continue is met')),
  )
  // an empty Allow: no method is allowed on an authority (RFC 9110 §10.2.1)
  server.on('connect', (_req: IncomingMessage, socket: Duplex) =>
    answerOnSocket(
      socket,
      shape,
      new AppError(405, 'method_not_allowed', 'CONNECT is not served: this is not a proxy', { allow: '' }),
    ),
  )
}

/**
 * RFC 9112 §3.2: a request without Host (HTTP/1.1), or with more than one, is answered 400. Node
 * answers the first with an empty body unless `requireHostHeader` is off, and lets the second through.
 */
export function hostHeaderError(request: FastifyRequest): AppError | undefined {
  const raw = request.raw
  const hosts = raw.rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'host').length
  if (hosts > 1) return bad('the request has more than one Host header')
  if (hosts === 0 && raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1)
    return bad('an HTTP/1.1 request must have a Host header')
  return undefined
}
