import assert from 'node:assert/strict'
import { test } from 'node:test'
import pino from 'pino'
import { errorCatalogue, httpErrorCodes } from './error-codes.ts'
import { createHttpServer } from './http/server.ts'

const errors = errorCatalogue({
  engagement_not_active: { status: 409, description: 'the engagement is not active' },
  engagement_not_found: { status: 404, description: 'no such engagement for this organization' },
})

/** An `api`-shaped server with no routes of a service's own, listing `errorCodes` if given. */
const apiServer = (errorCodes?: typeof errors.codes) =>
  createHttpServer({
    name: 'test',
    version: '0',
    description: 'codes',
    logger: pino({ level: 'silent' }),
    errorShape: 'api',
    checks: [],
    ...(errorCodes ? { errorCodes } : {}),
  })

test('a catalogued code raises its status, and the OpenAPI document lists every code', async () => {
  const app = await apiServer(errors.codes)
  app.get('/e', async () => {
    throw errors.error('engagement_not_active', 'the engagement is ended')
  })
  const res = await app.inject({ method: 'GET', url: '/e' })
  assert.equal(res.statusCode, 409)
  assert.equal(res.json().error.code, 'engagement_not_active')
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  assert.deepEqual(doc.components.schemas.ErrorCode.enum, ['engagement_not_active', 'engagement_not_found'])
  assert.equal(doc.components.schemas.ErrorCode['x-error-codes'].engagement_not_found.status, 404)
  await app.close()
})

test('a code that is not snake_case is refused when the catalogue is made', () => {
  assert.throws(() => errorCatalogue({ NotFound: { status: 404, description: 'x' } }), /not snake_case/)
})

test('a code answered with another status names it in the catalogue', () => {
  const upstream = errorCatalogue({
    idp_unavailable: { status: 503, also: [502], description: 'the identity provider is not reachable' },
  })
  assert.equal(upstream.errorWith(502, 'idp_unavailable', 'no answer').status, 502)
  assert.throws(() => upstream.errorWith(500, 'idp_unavailable', 'x'), /not catalogued with status 500/)
})

test('what the HTTP layer answers on its own is in httpErrorCodes, with its status', async () => {
  const app = await apiServer()
  app.post('/p', async () => ({ ok: true }))
  const answers = [
    await app.inject({ method: 'GET', url: '/nowhere' }),
    await app.inject({
      method: 'POST',
      url: '/p',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    }),
  ]
  for (const res of answers) {
    const code = res.json().error.code as keyof typeof httpErrorCodes
    assert.equal(httpErrorCodes[code]?.status, res.statusCode, code)
  }
  await app.close()
})
