import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { type Operation, key } from './operations.ts'
import {
  type Schema,
  malformedValue,
  ODD_STRINGS,
  textValue,
  toFormText,
  toJsonText,
  validValue,
} from './values.ts'

export type Shape = 'api' | 'oauth'

export interface SentRequest {
  label: string
  method: string
  url: string
  headers: Record<string, string>
  body?: string | Uint8Array
  /** Sent without the operation's credential: it must be refused with 401 whatever else is wrong. */
  anonymous: boolean
}

export interface Failure {
  service: string
  op: string
  problem:
    | 'server error'
    | 'error shape'
    | '400 before 401'
    | 'served without credential'
    | 'not refused'
    | 'tenancy'
  request: string
  status: number
  body: string
}

export interface BadInputOptions {
  service: string
  baseUrl: string
  shape: Shape
  operations: Operation[]
  /** Headers that carry the credential the operation needs, or {} for a public one. */
  credential: (op: Operation) => Record<string, string> | Promise<Record<string, string>>
  /** Whether a request lacking the credential must be answered 401 (see the sweep files for why not always). */
  requiresCredential: (op: Operation) => boolean
  /** Operations sent after all the others (their side effects would break the rest), with the reason. */
  last?: Record<string, string>
  seed: number
  /** Generated malformed bodies (and query strings) per operation, authenticated. */
  runs: number
  concurrency?: number
  /** Operations a person's browser reaches, whose errors may be HTML pages (RFC 6749 §4.1.2.1 asks it of /authorize). */
  pages?: (op: Operation) => boolean
  /** Ids of real objects by collection (`tokens` for `/api/tokens/{id}`), so requests reach past the lookup. */
  ids?: Record<string, string>
}

/** Percent-encodes text as UTF-8 bytes (a lone surrogate becomes U+FFFD rather than throwing). */
export const encodeText = (text: string) =>
  [...Buffer.from(text, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0')}`,
    )
    .join('')

const sample = <T>(arb: fc.Arbitrary<T>, seed: number, numRuns: number): T[] =>
  numRuns <= 0 ? [] : fc.sample(arb, { seed, numRuns })

/** A stable number per operation, so each gets its own samples and a rerun gets the same ones. */
const seedOf = (base: number, text: string) =>
  [...text].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, base)

function pathWith(op: Operation, values: Record<string, string>) {
  return op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => values[name] ?? 'x')
}

function query(op: Operation, values: Record<string, string>, extra = '') {
  const pairs = Object.entries(values).map(([k, v]) => `${encodeText(k)}=${encodeText(v)}`)
  if (extra) pairs.push(extra)
  return pairs.length ? `?${pairs.join('&')}` : ''
}

/** The requests the sweep sends to one operation. */
export function requestsFor(
  op: Operation,
  options: Pick<BadInputOptions, 'seed' | 'runs' | 'baseUrl' | 'ids'>,
): SentRequest[] {
  const seed = seedOf(options.seed, key(op.method, op.path))
  const params = (where: Parameter['in'], malformed: boolean, run: number) => {
    const values: Record<string, string> = {}
    for (const p of op.parameters.filter((q) => q.in === where)) {
      if (!malformed && !p.required && where !== 'path') continue
      values[p.name] = sample(textValue(p.schema, malformed && run % 2 === 0), seed + run, 1)[0]!
    }
    return values
  }
  // real objects where the sweep holds one (the segment before the parameter names its collection)
  const known: Record<string, string> = {}
  for (const [, collection, name] of op.path.matchAll(/\/([^/{}]+)\/\{([^}]+)\}/g))
    if (options.ids?.[collection!]) known[name!] = options.ids[collection!]!
  const validPath = pathWith(op, mapValues({ ...params('path', false, 0), ...known }, encodeText))
  const validQuery = query(op, params('query', false, 0))
  const url = (path: string, q = validQuery) => `${options.baseUrl}${path}${q}`
  const out: SentRequest[] = []
  const add = (label: string, init: Omit<SentRequest, 'label' | 'method' | 'anonymous'>, anonymous = false) =>
    out.push({ label, method: op.method, anonymous, ...init })

  const bodyTypes = Object.entries(op.bodies)
  const hasBody = bodyTypes.length > 0
  const baseHeaders = { accept: 'application/json' }

  // malformed bodies, generated from each content type's schema
  for (const [type, schema] of bodyTypes) {
    const form = type === 'application/x-www-form-urlencoded'
    const encode = form ? toFormText : toJsonText
    const bodies = sample(malformedValue(schema), seed, options.runs)
    const valid = sample(validValue(schema) as fc.Arbitrary<unknown>, seed + 1, 2)
    for (const [i, body] of [...bodies, ...valid].entries()) {
      add(`${type} body #${i}`, {
        url: url(validPath),
        headers: { ...baseHeaders, 'content-type': type },
        body: encode(body),
      })
      if (i < 3)
        add(
          `${type} body #${i}`,
          { url: url(validPath), headers: { ...baseHeaders, 'content-type': type }, body: encode(body) },
          true,
        )
    }
    const sampleBody = encode(valid[0] ?? {})
    const fixed: Array<[string, Record<string, string>, string | Uint8Array]> = [
      ['invalid JSON', { 'content-type': type }, form ? '%zz=%&&=' : '{"a":'],
      ['empty body', { 'content-type': type }, ''],
      ['empty object', { 'content-type': type }, form ? 'unused=' : '{}'],
      ['wrong content type', { 'content-type': 'text/plain' }, sampleBody],
      ['gzip content encoding', { 'content-type': type, 'content-encoding': 'gzip' }, gzipSync(sampleBody)],
      ['latin1 charset', { 'content-type': `${type}; charset=latin1` }, sampleBody],
      [
        'deep nesting',
        { 'content-type': type },
        form ? sampleBody : `${'['.repeat(5000)}${']'.repeat(5000)}`,
      ],
    ]
    for (const [label, headers, body] of fixed)
      add(label, { url: url(validPath), headers: { ...baseHeaders, ...headers }, body })
    add(
      'invalid JSON',
      {
        url: url(validPath),
        headers: { ...baseHeaders, 'content-type': type },
        body: form ? 'a=%' : '{"a":',
      },
      true,
    )
  }
  if (!hasBody) {
    const noBody = ['GET', 'DELETE'].includes(op.method)
    add('no body', { url: url(validPath), headers: baseHeaders }, true)
    add('no body', { url: url(validPath), headers: baseHeaders })
    // a body the document does not describe (a raw JSON-RPC endpoint, or none expected): still no 5XX
    const undescribed: Array<[string, Record<string, string>, string | Uint8Array]> = [
      ['unexpected JSON body', { 'content-type': 'application/json' }, '{"unexpected":1e309}'],
      ['invalid JSON', { 'content-type': 'application/json' }, '{"a":'],
      ['JSON array', { 'content-type': 'application/json' }, '[null, 1e309]'],
      [
        'JSON-RPC with wrong types',
        { 'content-type': 'application/json' },
        '{"jsonrpc":2,"id":{},"method":[],"params":"x"}',
      ],
      [
        'JSON-RPC with odd strings',
        { 'content-type': 'application/json' },
        toJsonText({
          jsonrpc: '2.0',
          id: '\ud800',
          method: 'SendMessage',
          params: { message: { role: '\u0000', parts: [{ text: '\u202e' }], messageId: 'a'.repeat(10_000) } },
        }),
      ],
      [
        'gzip content encoding',
        { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        gzipSync('{}'),
      ],
      ['latin1 charset', { 'content-type': 'application/json; charset=latin1' }, '{}'],
      ['wrong content type', { 'content-type': 'text/plain' }, 'x'],
    ]
    if (!noBody)
      for (const [label, headers, body] of undescribed)
        add(label, { url: url(validPath), headers: { ...baseHeaders, ...headers }, body })
  }

  // malformed query strings and path parameters
  const queryParams = op.parameters.filter((p) => p.in === 'query')
  for (let run = 0; run < (queryParams.length ? Math.ceil(options.runs / 2) : 0); run++)
    add(`query #${run}`, { url: url(validPath, query(op, params('query', true, run))), headers: baseHeaders })
  if (queryParams.length) {
    const first = queryParams[0]!.name
    add('repeated query parameter', {
      url: url(validPath, query(op, {}, `${first}=1&${first}=2`)),
      headers: baseHeaders,
    })
    add(
      'query parameter 1e309',
      { url: url(validPath, query(op, { [first]: '1e309' })), headers: baseHeaders },
      true,
    )
    const required = params('query', false, 0)
    for (const p of queryParams)
      for (const edge of ['1e309', '-1e309', '-1', '9223372036854775808', 'NaN', 'abc', ''])
        add(`query ${p.name}=${edge}`, {
          url: url(validPath, query(op, { ...required, [p.name]: edge })),
          headers: baseHeaders,
        })
  }
  const pathParams = op.parameters.filter((p) => p.in === 'path')
  if (pathParams.length) {
    const raw = [
      '%zz',
      '%',
      '..',
      '%2e%2e',
      '%00',
      'a'.repeat(300),
      encodeText('\u202e'),
      encodeText('\ud800'),
      '-1',
      '1e309',
      '9223372036854775808',
    ]
    for (const value of raw) {
      const values: Record<string, string> = {}
      for (const p of pathParams) values[p.name] = value
      add(`path parameter ${value.slice(0, 20)}`, { url: url(pathWith(op, values)), headers: baseHeaders })
    }
    for (const [i, odd] of ODD_STRINGS.filter((s) => s.length > 0 && s.length < 200).entries()) {
      const values: Record<string, string> = {}
      for (const p of pathParams) values[p.name] = encodeText(odd)
      add(`path parameter odd #${i}`, { url: url(pathWith(op, values)), headers: baseHeaders })
    }
  }
  // headers the operation declares, malformed
  for (const header of op.parameters.filter((p) => p.in === 'header'))
    add(`header ${header.name}`, {
      url: url(validPath),
      headers: { ...baseHeaders, [header.name]: 'x'.repeat(5000) },
      ...(hasBody ? { body: '{}' } : {}),
    })
  return out
}

type Parameter = Operation['parameters'][number]
const mapValues = (o: Record<string, string>, f: (v: string) => string) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]))

/** Whether an error body has the service's documented shape. */
export function hasShape(shape: Shape, body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  // JSON-RPC endpoints (A2A) answer errors in the JSON-RPC 2.0 envelope, which their documents describe
  if (b.jsonrpc === '2.0') {
    const rpc = b.error as Record<string, unknown> | undefined
    return Number.isInteger(rpc?.code) && typeof rpc?.message === 'string'
  }
  if (shape === 'oauth') return typeof b.error === 'string' && typeof b.error_description === 'string'
  const error = b.error as Record<string, unknown> | undefined
  return typeof error?.code === 'string' && typeof error.message === 'string'
}

/** Sends one request and says what is wrong with the answer, if anything. */
export async function check(
  options: Pick<BadInputOptions, 'service' | 'shape' | 'pages'>,
  op: Operation,
  req: SentRequest,
  mustAuthenticate: boolean,
): Promise<Failure | undefined> {
  const res = await fetch(req.url, {
    method: req.method,
    headers: req.headers,
    body: req.body,
    redirect: 'manual',
  })
  const text = await res.text()
  const fail = (problem: Failure['problem']): Failure => ({
    service: options.service,
    op: key(op.method, op.path).replace('{}', '{…}'),
    problem,
    request: `${req.method} ${req.url.slice(0, 300)} [${req.label}${req.anonymous ? ', no credential' : ''}] ${
      typeof req.body === 'string' ? req.body.slice(0, 200) : req.body ? '<binary>' : ''
    }`,
    status: res.status,
    body: text.slice(0, 300),
  })
  if (res.status >= 500) return fail('server error')
  // the exact status of a refusal (401, 403 without CSRF) is the auth sweep's; here: nothing served, no 400 first
  if (req.anonymous && mustAuthenticate) {
    if (res.status === 400 || res.status === 422) return fail('400 before 401')
    const toSignIn =
      res.status >= 300 && res.status < 400 && /\/login\b/.test(res.headers.get('location') ?? '')
    if (res.status < 400 && !toSignIn) return fail('served without credential')
  }
  const page = /^text\/html\b/.test(res.headers.get('content-type') ?? '') && /^<!doctype html>/i.test(text)
  if (res.status >= 400 && !(page && options.pages?.(op))) {
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return fail('error shape')
    }
    if (!hasShape(options.shape, body)) return fail('error shape')
  }
  return undefined
}

/** Runs the sweep over every operation; answers every failure found (none means the service held). */
export async function sweepBadInput(
  options: BadInputOptions,
): Promise<{ failures: Failure[]; sent: number; slowest: string[] }> {
  const last = options.last ?? {}
  const lastKeys = Object.keys(last)
  const first = options.operations.filter((op) => !lastKeys.includes(key(op.method, op.path)))
  const ordered = lastKeys.flatMap((k) => options.operations.filter((op) => key(op.method, op.path) === k))
  const failures: Failure[] = []
  let sent = 0
  const timings: Array<[string, number]> = []
  const runOne = async (op: Operation) => {
    const started = performance.now()
    const mustAuthenticate = options.requiresCredential(op)
    const credential = await options.credential(op)
    for (const req of requestsFor(op, options)) {
      if (!req.anonymous) req.headers = { ...credential, ...req.headers }
      else if (!mustAuthenticate) continue
      sent++
      const failure = await check(options, op, req, mustAuthenticate)
      if (failure) failures.push(failure)
    }
    timings.push([key(op.method, op.path), performance.now() - started])
  }
  const queue = [...first]
  const workers = Array.from({ length: options.concurrency ?? 4 }, async () => {
    for (let op = queue.shift(); op; op = queue.shift()) await runOne(op)
  })
  await Promise.all(workers)
  for (const op of ordered) await runOne(op)
  const slowest = timings
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([k, ms]) => `${k} ${Math.round(ms)} ms`)
  return { failures, sent, slowest }
}

export type { Schema }
