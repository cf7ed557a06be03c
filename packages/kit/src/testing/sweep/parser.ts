import { isDeepStrictEqual } from 'node:util'
import { type RawAnswer, rawRequest } from './raw-http.ts'
import type { Shape } from './bad-input.ts'

/** A request that changes what `state` reads when it is sent well formed: each case breaks its framing. */
export interface ParserTarget {
  method: 'POST' | 'PUT' | 'PATCH'
  path: string
  /** Its credential and content type; Host and the body's framing are the sweep's. */
  headers: Record<string, string>
  body: string
}

export interface ParserCase {
  label: string
  bytes: string
  status: number
  /** The `api` shape's `error.code` (the `oauth` shape's `error` is `invalid_request` for every case). */
  code: string
  /** The server must close the connection: it cannot tell where a next request would start. */
  closes: boolean
}

const chunked = (body: string) => `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`

/** The parser-level requests: what Node's llhttp refuses, what Node answers itself, and what Fastify refuses before a route runs. */
export function parserCases(baseUrl: string, target: ParserTarget): ParserCase[] {
  const host = `Host: ${new URL(baseUrl).host}\r\n`
  const { method, path, body } = target
  const length = Buffer.byteLength(body)
  const given = Object.entries(target.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  const untyped = Object.entries(target.headers)
    .filter(([name]) => name.toLowerCase() !== 'content-type')
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  const line = `${method} ${path} HTTP/1.1\r\n`
  /** Well framed, with a body the route's JSON parser refuses before the route runs. */
  const typed = (type: string, payload: string) =>
    `${line}${host}${untyped}Content-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`
  const request = (framing: string, payload = body, head = line + host) =>
    `${head}${given}${framing}\r\n${payload}`
  const sized = `Content-Length: ${length}\r\n`
  const te = 'Transfer-Encoding: chunked\r\n'
  const refused = (label: string, bytes: string, status = 400, code = 'invalid_request'): ParserCase => ({
    label,
    bytes,
    status,
    code,
    closes: true,
  })
  return [
    refused('a Content-Length that is not a number', request(`Content-Length: ${length}x\r\n`)),
    refused('a negative Content-Length', request('Content-Length: -1\r\n')),
    refused('both Content-Length and Transfer-Encoding', request(sized + te, chunked(body))),
    refused('two Content-Length values', request(`${sized}Content-Length: ${length + 1}\r\n`)),
    refused('a Transfer-Encoding that does not end in chunked', request('Transfer-Encoding: gzip\r\n')),
    refused('a malformed chunk size', request(te, `zz\r\n${body}\r\n0\r\n\r\n`)),
    refused(
      'chunk data longer than its size',
      request(te, `${(length - 1).toString(16)}\r\n${body}\r\n0\r\n\r\n`),
    ),
    refused(
      'chunk extensions over 16 KB',
      request(te, `${length.toString(16)};x=${'e'.repeat(20_000)}\r\n${body}\r\n0\r\n\r\n`),
      413,
      'payload_too_large',
    ),
    refused(
      'a 70 KB header',
      request(`${sized}X-Padding: ${'p'.repeat(70 * 1024)}\r\n`),
      431,
      'headers_too_large',
    ),
    refused(
      'a 20 KB request target',
      request(sized, body, `${method} ${path}?pad=${'p'.repeat(20_000)} HTTP/1.1\r\n${host}`),
      431,
      'headers_too_large',
    ),
    refused('a method with an invalid character', request(sized, body, `P@ST ${path} HTTP/1.1\r\n${host}`)),
    refused('a method the parser does not know', request(sized, body, `BREW ${path} HTTP/1.1\r\n${host}`)),
    refused(
      'a control character in the target',
      request(sized, body, `${method} ${path}\x01 HTTP/1.1\r\n${host}`),
    ),
    refused('a space in the target', request(sized, body, `${method} ${path} x HTTP/1.1\r\n${host}`)),
    refused('a space in a header name', request(`${sized}Bad Header: x\r\n`)),
    refused('a NUL in a header value', request(`${sized}X-Note: a\x00b\r\n`)),
    refused('a folded header (obs-fold)', request(`${sized}X-Note: a\r\n b\r\n`)),
    refused('bare LF line ends', request(sized).replaceAll('\r\n', '\n')),
    refused(
      'HTTP/3.0 in the request line',
      request(sized, body, `${method} ${path} HTTP/3.0\r\n${host}`),
      505,
      'http_version_not_supported',
    ),
    refused('a malformed HTTP version', request(sized, body, `${method} ${path} HTTP/1.x\r\n${host}`)),
    refused('a TLS ClientHello', '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03'),
    refused('the HTTP/2 connection preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
    refused(
      'an Expect other than 100-continue',
      request(`${sized}Expect: coffee\r\n`),
      417,
      'expectation_failed',
    ),
    refused('CONNECT', `CONNECT ${new URL(baseUrl).host} HTTP/1.1\r\n${host}\r\n`, 405, 'method_not_allowed'),
    refused(
      'a body past any limit',
      request('Content-Length: 100000000\r\n', body),
      413,
      'payload_too_large',
    ),
    {
      label: 'no Host',
      bytes: request(sized, body, line),
      status: 400,
      code: 'invalid_request',
      closes: false,
    },
    {
      label: 'two Host headers',
      bytes: request(`${sized}Host: elsewhere.example\r\n`),
      status: 400,
      code: 'invalid_request',
      closes: false,
    },
    {
      label: 'an unsupported content type',
      bytes: typed('application/x-unknown', body),
      status: 415,
      code: 'unsupported_media_type',
      closes: false,
    },
    {
      label: 'malformed JSON',
      bytes: typed('application/json', body.slice(0, -1)),
      status: 400,
      code: 'invalid_json',
      closes: false,
    },
    {
      label: 'an empty JSON body',
      bytes: typed('application/json', ''),
      status: 400,
      code: 'invalid_json',
      closes: false,
    },
    {
      label: 'malformed percent-encoding in the path',
      bytes: request(sized, body, `${method} ${path}/%zz HTTP/1.1\r\n${host}`),
      status: 400,
      code: 'invalid_request',
      closes: false,
    },
  ]
}

export interface ParserSweepOptions {
  baseUrl: string
  shape: Shape
  target: ParserTarget
  /** What the target changes, read before and after the sweep. */
  state: () => Promise<unknown>
  /** Cases of the service's own (a content type or body its route refuses), checked the same way. */
  extra?: ParserCase[]
}

function problemsOf(answer: RawAnswer, shape: Shape, expected: ParserCase): string[] {
  const problems: string[] = []
  if (answer.status !== expected.status) problems.push(`status ${answer.status}, not ${expected.status}`)
  if (!/^application\/json\b/.test(answer.headers['content-type'] ?? ''))
    problems.push(`content-type ${answer.headers['content-type']}`)
  if (expected.closes && !answer.closed) problems.push('the connection was left open')
  if (expected.closes && answer.headers.connection?.toLowerCase() !== 'close')
    problems.push('no connection: close')
  let body: Record<string, unknown>
  try {
    body = JSON.parse(answer.body) as Record<string, unknown>
  } catch {
    return [...problems, 'the body is not JSON']
  }
  if (shape === 'oauth') {
    if (body.error !== 'invalid_request') problems.push(`error ${JSON.stringify(body.error)}`)
    if (typeof body.error_description !== 'string' || !body.error_description)
      problems.push('no error_description')
  } else {
    const error = body.error as { code?: unknown; message?: unknown } | undefined
    if (error?.code !== expected.code)
      problems.push(`code ${JSON.stringify(error?.code)}, not ${expected.code}`)
    if (typeof error?.message !== 'string' || !error.message) problems.push('no message')
  }
  const requestId = shape === 'oauth' ? body.request_id : (body.error as { request_id?: unknown })?.request_id
  if (!answer.headers['x-request-id'] || answer.headers['x-request-id'] !== requestId)
    problems.push('x-request-id does not name the body’s request_id')
  return problems
}

/**
 * Sends each parser-level case over a raw socket; each must be answered with its status in the
 * service's error shape, and none may change the state. The well-formed target is sent last, and must
 * change it: a state the target cannot change proves nothing.
 */
export async function sweepParserErrors(
  options: ParserSweepOptions,
): Promise<{ failures: string[]; sent: number }> {
  // the cases are sent as latin1 bytes: a target body outside ASCII would be framed with the wrong length
  if (!/^[\x20-\x7e]*$/.test(options.target.body)) throw new Error('the target body must be printable ASCII')
  const cases = [...parserCases(options.baseUrl, options.target), ...(options.extra ?? [])]
  const failures: string[] = []
  const before = await options.state()
  for (const c of cases) {
    try {
      const problems = problemsOf(await rawRequest(options.baseUrl, c.bytes), options.shape, c)
      if (problems.length) failures.push(`${c.label}: ${problems.join('; ')}`)
    } catch (err) {
      failures.push(`${c.label}: ${(err as Error).message.slice(0, 300)}`)
    }
  }
  const after = await options.state()
  if (!isDeepStrictEqual(before, after))
    failures.push(`the state changed: ${JSON.stringify(before)} became ${JSON.stringify(after)}`)
  const { method, path, headers, body } = options.target
  const wellFormed = await rawRequest(
    options.baseUrl,
    Buffer.from(
      `${method} ${path} HTTP/1.1\r\nHost: ${new URL(options.baseUrl).host}\r\n` +
        Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('') +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    ),
  )
  if (wellFormed.status >= 300)
    failures.push(`the well-formed target answered ${wellFormed.status}: ${wellFormed.body.slice(0, 300)}`)
  else if (isDeepStrictEqual(after, await options.state()))
    failures.push('the well-formed target changed nothing: the state checked proves nothing')
  return { failures, sent: cases.length + 1 }
}
