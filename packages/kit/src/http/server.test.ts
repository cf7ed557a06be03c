import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import { AppError } from '../errors.ts'
import { type RunningService, type ServiceSpec, startService } from '../service.ts'
import { request, tempFolder } from '../testing.ts'

const Item = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 40 }), amount: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
)

function spec(errorShape: 'api' | 'oauth'): ServiceSpec<Record<string, never>> {
  return {
    name: 'ledger',
    version: '9.9.9',
    description: 'a test service',
    migrations: tempFolder({
      '0001_items.sql': 'create table items (name text primary key, amount int8 not null);',
    }),
    errorShape,
    readConfig: () => ({}),
    async build(app, ctx) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test's own table
      const db = ctx.database!.db as Kysely<any>
      app.post('/items', { schema: { body: Item, response: { 200: Item } } }, async (request) => {
        await db.insertInto('items').values(request.body).execute()
        return request.body
      })
      app.get(
        '/items',
        {
          schema: {
            querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }) }),
          },
        },
        async (request) => ({
          items: await db.selectFrom('items').selectAll().limit(request.query.limit).execute(),
        }),
      )
      app.get('/boom', async () => {
        throw new Error('secret internal detail')
      })
      app.get('/teapot', async () => {
        throw new AppError(429, 'slow_down', 'too many requests', { 'retry-after': '60' })
      })
      app.get('/slow', async () => {
        await new Promise((r) => setTimeout(r, 400))
        return { done: true }
      })
    },
  }
}

const env = { ...process.env, LOG_LEVEL: 'silent' }

const call = (base: string, path: string, init: RequestInit = {}) => request(base + path, init)

const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: typeof body === 'string' ? body : JSON.stringify(body),
})

function assertApiError(
  res: { status: number; body: Record<string, unknown> },
  status: number,
  code: string,
) {
  assert.equal(res.status, status, JSON.stringify(res.body))
  const error = res.body.error as Record<string, unknown>
  assert.equal(error.code, code)
  assert.equal(typeof error.message, 'string')
  assert.ok((error.message as string).length > 0)
  assert.match(error.request_id as string, /^req_/)
}

describe('http server (api error shape)', () => {
  let service: RunningService<Record<string, never>>
  let base: string
  before(async () => {
    service = await startService(spec('api'), env, { fresh: true })
    base = service.url
  })
  after(async () => service.close())

  it('serves a valid request and echoes a request id', async () => {
    const res = await call(base, '/items', {
      ...json({ name: 'a', amount: 5 }),
      headers: { 'content-type': 'application/json', 'x-request-id': 'trace-123' },
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { name: 'a', amount: 5 })
    assert.equal(res.headers.get('x-request-id'), 'trace-123')
    const generated = await call(base, '/items?limit=5')
    assert.match(generated.headers.get('x-request-id') ?? '', /^req_[A-Za-z0-9_-]{16}$/)
  })

  it('answers malformed JSON with 400 invalid_json', async () => {
    assertApiError(await call(base, '/items', json('{"name": "a",')), 400, 'invalid_json')
    assertApiError(await call(base, '/items', json('')), 400, 'invalid_json')
  })

  it('names the field that fails validation', async () => {
    const missing = await call(base, '/items', json({ name: 'a' }))
    assertApiError(missing, 400, 'invalid_request')
    assert.match((missing.body.error as { message: string }).message, /body\.amount is required/)
    const unknown = await call(base, '/items', json({ name: 'a', amount: 1, admin: true }))
    assertApiError(unknown, 400, 'invalid_request')
    assert.match((unknown.body.error as { message: string }).message, /unknown field "admin"/)
    const wrongType = await call(base, '/items', json({ name: 'a', amount: 'lots' }))
    assertApiError(wrongType, 400, 'invalid_request')
    assert.match((wrongType.body.error as { message: string }).message, /body\.amount must be integer/)
    assertApiError(await call(base, '/items?limit=101'), 400, 'invalid_request')
    assertApiError(await call(base, '/items?limit=abc'), 400, 'invalid_request')
  })

  it('answers a wrong content type with 415 and an oversized body with 413', async () => {
    assertApiError(
      await call(base, '/items', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'a,1' }),
      415,
      'unsupported_media_type',
    )
    assertApiError(
      await call(base, '/items', json({ name: 'x'.repeat(2 * 1024 * 1024), amount: 1 })),
      413,
      'payload_too_large',
    )
  })

  it('answers an unknown route with 404 in the same shape', async () => {
    const res = await call(base, '/nowhere?x=1')
    assertApiError(res, 404, 'not_found')
    assert.match((res.body.error as { message: string }).message, /GET \/nowhere$/)
  })

  it('answers a known path under another method with 405 and Allow', async () => {
    const res = await call(base, '/items?x=1', { method: 'DELETE' })
    assertApiError(res, 405, 'method_not_allowed')
    assert.equal(res.headers.get('allow'), 'GET, HEAD, POST')
  })

  it('maps a unique violation to 409 and changes nothing', async () => {
    assert.equal((await call(base, '/items', json({ name: 'dup', amount: 1 }))).status, 200)
    assertApiError(await call(base, '/items', json({ name: 'dup', amount: 2 })), 409, 'conflict')
    const list = await call(base, '/items?limit=100')
    assert.deepEqual(
      (list.body.items as Array<{ name: string; amount: number }>).filter((i) => i.name === 'dup'),
      [{ name: 'dup', amount: 1 }],
    )
  })

  it('hides an unexpected failure behind a 500 that leaks nothing', async () => {
    const res = await call(base, '/boom')
    assertApiError(res, 500, 'internal_error')
    assert.doesNotMatch(JSON.stringify(res.body), /secret internal detail|at .*\.ts/)
  })

  it('passes an AppError’s status, code and headers through', async () => {
    const res = await call(base, '/teapot')
    assertApiError(res, 429, 'slow_down')
    assert.equal(res.headers.get('retry-after'), '60')
  })

  it('never answers 5XX to a battery of malformed requests', async () => {
    const requests: Array<[string, RequestInit]> = [
      ['/items', json('null')],
      ['/items', json('[]')],
      ['/items', json('"text"')],
      ['/items', json('{"name": null, "amount": 1}')],
      ['/items', json('{"name": "", "amount": 1}')],
      ['/items', json('{"name": "a", "amount": -1}')],
      ['/items', json('{"name": "a", "amount": 1e400}')],
      ['/items', json('{"name": "a", "amount": 99999999999999999999}')],
      ['/items', json('{"__proto__": {"x": 1}, "name": "a", "amount": 1}')],
      ['/items', { method: 'POST', headers: { 'content-type': 'application/json' } }],
      [
        '/items',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'name=a&amount=x',
        },
      ],
      ['/items', { method: 'PUT', ...json({}) }],
      ['/items?limit=1&limit=2', {}],
      ['/items?limit=%ff', {}],
      ['/%zz', {}],
      ['/items', { method: 'DELETE' }],
    ]
    for (const [path, init] of requests) {
      const res = await call(base, path, init)
      assert.ok(
        res.status >= 400 && res.status < 500,
        `${init.method ?? 'GET'} ${path} answered ${res.status}`,
      )
      assert.equal(
        typeof (res.body.error as { code?: unknown })?.code,
        'string',
        `${path}: ${JSON.stringify(res.body)}`,
      )
    }
  })

  it('serves the API reference for people at /docs: the OpenAPI operations as one self-contained page', async () => {
    const res = await fetch(`${base}/docs`)
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/)
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/)
    const page = await res.text()
    assert.match(page, /<title>ledger 9\.9\.9: API reference<\/title>/)
    assert.match(page, /POST<\/span> <code>\/items<\/code>/)
    assert.match(
      page,
      /<code>name<\/code><\/td><td>body \(application\/json\)<\/td><td>string \(length 1–40\)/,
    )
    assert.match(page, /<code>limit<\/code><\/td><td>query<\/td><td>integer \(1–100, default 20\)/)
    assert.match(page, /\{&quot;error&quot;: \{&quot;code&quot;/)
    assert.doesNotMatch(page, /<script|https?:\/\//, 'nothing loaded from elsewhere')
  })

  it('publishes an OpenAPI 3.1 document with the routes and their schemas', async () => {
    const res = await call(base, '/openapi.json')
    assert.equal(res.status, 200)
    assert.equal(res.body.openapi, '3.1.0')
    assert.deepEqual(res.body.info, { title: 'ledger', version: '9.9.9', description: 'a test service' })
    const paths = res.body.paths as Record<string, Record<string, { requestBody?: unknown }>>
    assert.ok(paths['/items']?.post?.requestBody)
    assert.ok(paths['/readyz']?.get)
  })

  it('exports Prometheus metrics with request durations by route template', async () => {
    const res = await fetch(`${base}/metrics`)
    assert.equal(res.status, 200)
    const text = await res.text()
    assert.match(text, /http_request_duration_seconds_count\{[^}]*route="\/items"[^}]*\} \d+/)
    assert.match(text, /process_resident_memory_bytes/)
  })

  it('reports ready while the database answers, and live regardless', async () => {
    assert.deepEqual((await call(base, '/readyz')).body, {
      status: 'ready',
      checks: { db: 'ok', redis: process.env.REDIS_URL ? 'ok' : 'not_configured' },
    })
    assert.deepEqual((await call(base, '/healthz')).body, { status: 'ok' })
  })
})

describe('http server shutdown', () => {
  it('fails readiness while draining, finishes in-flight requests, refuses new ones while closing', async () => {
    const service = await startService(spec('api'), env, { fresh: true })
    const base = service.url
    service.app.lifecycle.draining = true
    const draining = await call(base, '/readyz')
    assert.equal(draining.status, 503)
    assert.equal(draining.body.status, 'draining')
    assert.equal((await call(base, '/healthz')).status, 200)

    const inFlight = call(base, '/slow')
    await new Promise((r) => setTimeout(r, 100))
    const closing = service.close()
    const refused = await fetch(`${base}/items?limit=1`).then(
      (r) => r.status,
      () => 'connection refused',
    )
    assert.ok(refused === 503 || refused === 'connection refused', String(refused))
    const finished = await inFlight
    assert.equal(finished.status, 200)
    assert.deepEqual(finished.body, { done: true })
    await closing
  })

  it('fails readiness when the database stops answering', async () => {
    const service = await startService(spec('api'), env, { fresh: true })
    await service.ctx.database!.close()
    const res = await call(service.url, '/readyz')
    assert.equal(res.status, 503)
    assert.deepEqual(res.body.checks, { db: 'down', redis: process.env.REDIS_URL ? 'ok' : 'not_configured' })
    assert.equal((await call(service.url, '/healthz')).status, 200)
    await service.close()
  })
})

describe('http server (RFC 6749 error shape)', () => {
  let service: RunningService<Record<string, never>>
  before(async () => {
    service = await startService(spec('oauth'), env, { fresh: true })
  })
  after(async () => service.close())

  it('answers errors as {error, error_description}', async () => {
    const invalid = await call(service.url, '/items', json({ name: 'a' }))
    assert.equal(invalid.status, 400)
    assert.equal(invalid.body.error, 'invalid_request')
    assert.match(invalid.body.error_description as string, /body\.amount is required/)
    const custom = await call(service.url, '/teapot')
    assert.equal(custom.status, 429)
    assert.equal(custom.body.error, 'slow_down')
    const crash = await call(service.url, '/boom')
    assert.equal(crash.status, 500)
    assert.equal(crash.body.error, 'server_error')
    assert.equal(crash.headers.get('cache-control'), 'no-store')
  })
})
