import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN } from '@svc/testing/idp-flow'

const FORM = 'application/x-www-form-urlencoded'
const post = (body: string, type = FORM): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': type },
  body,
})

/** A 4XX in RFC 6749's shape, never a 500, with the expected status and code. */
async function refused(res: Response, status: number, code: string) {
  const text = await res.text()
  assert.equal(res.status, status, text)
  const body = JSON.parse(text) as Record<string, unknown>
  assert.equal(body.error, code, text)
  assert.equal(typeof body.error_description, 'string')
  return body
}

describe('idp: bad input answers a clear 4XX in RFC 6749 form', () => {
  let service: RunningService<IdpConfig>
  const call = (path: string, init?: RequestInit) =>
    fetch(service.url + path, { redirect: 'manual', ...init })

  before(async () => {
    service = await startService(idp, testEnv({ IDP_ADMIN_TOKEN: ADMIN }), { fresh: true })
  })
  after(async () => service.close())

  it('answers a wrong method with 405 and Allow', async () => {
    for (const [method, path] of [
      ['GET', '/token'],
      ['DELETE', '/token'],
      ['PUT', '/authorize'],
      ['PUT', '/userinfo'],
      ['GET', '/revoke'],
      ['GET', '/introspect'],
      ['POST', '/.well-known/jwks.json'],
      ['POST', '/.well-known/openid-configuration'],
      ['DELETE', '/manage/v1/clients'],
    ] as const) {
      const res = await call(path, { method })
      await refused(res, 405, 'invalid_request')
      assert.ok(res.headers.get('allow'), `${method} ${path} names the methods it allows`)
    }
    await refused(await call('/nowhere'), 404, 'not_found')
    // RFC 6749 has no code for a wrong method: the status says it, the code is invalid_request
  })

  it('refuses repeated parameters (RFC 6749 §3.1)', async () => {
    for (const [path, init] of [
      ['/token', post('grant_type=authorization_code&grant_type=refresh_token')],
      ['/revoke', post('token=a&token=b')],
      ['/introspect', post('token=a&token=b')],
      ['/authorize?client_id=a&client_id=b&response_type=code', undefined],
      ['/logout?id_token_hint=a&id_token_hint=b', undefined],
    ] as const) {
      const body = await refused(await call(path, init), 400, 'invalid_request')
      assert.match(String(body.error_description), /must not be repeated/)
    }
  })

  it('refuses the wrong content types, missing bodies and oversized values', async () => {
    await refused(
      await call('/token', post('{"grant_type":"refresh_token"}', 'application/json')),
      400,
      'invalid_request',
    )
    for (const path of ['/token', '/revoke', '/introspect']) {
      const body = await refused(await call(path, post('token=x', 'text/plain')), 400, 'invalid_request')
      assert.match(String(body.error_description), /is a form/)
    }
    await refused(await call('/token', { method: 'POST' }), 400, 'invalid_request')
    await refused(
      await call('/token', post(`grant_type=refresh_token&refresh_token=${'a'.repeat(20_000)}`)),
      400,
      'invalid_request',
    )
    await refused(
      await call('/token', post(`refresh_token=${'a'.repeat(2_000_000)}`)),
      413,
      'invalid_request',
    )
    await refused(await call(`/authorize?client_id=${'a'.repeat(10_000)}`), 400, 'invalid_request')
    await refused(await call('/ui/login', post('{', 'application/json')), 400, 'invalid_request')
    await refused(
      await call('/manage/v1/clients', {
        method: 'POST',
        headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'x', redirect_uris: ['https://a.example/cb'], extra: 1 }),
      }),
      400,
      'invalid_request',
    )
  })

  it('refuses unauthenticated clients and bad tokens without a 500', async () => {
    await refused(
      await call('/token', post('grant_type=refresh_token&refresh_token=%00')),
      401,
      'invalid_client',
    )
    await refused(await call('/introspect', post('token=x')), 401, 'invalid_client')
    await refused(await call('/revoke', post('token=x')), 401, 'invalid_client')
    const userinfo = await call('/userinfo', { headers: { authorization: 'Bearer x.y.z' } })
    await refused(userinfo, 401, 'invalid_token')
    assert.match(userinfo.headers.get('www-authenticate')!, /^Bearer error="invalid_token"/)
  })

  it('answers a 4XX, never a 500, to malformed requests on the newer endpoints', async () => {
    const signup = await call(
      '/orgs/signup',
      post(
        JSON.stringify({ name: 'Bad', contact_email: 'ops@bad.example.com', accept_terms: true }),
        'application/json',
      ),
    )
    const key = ((await signup.json()) as { api_key: string }).api_key
    const org = { authorization: `Bearer ${key}` }
    const client = await call('/orgs/clients', {
      method: 'POST',
      headers: { ...org, 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'c',
        client_type: 'confidential',
        redirect_uris: ['https://c.example/cb'],
      }),
    })
    const { client_id, client_secret } = (await client.json()) as { client_id: string; client_secret: string }
    const basic = {
      authorization: `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}`,
    }
    const json = (headers: Record<string, string>, body: string, method = 'POST'): RequestInit => ({
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    })
    const cases: Array<[string, RequestInit | undefined]> = [
      [
        '/token',
        {
          method: 'POST',
          headers: { ...basic, 'content-type': FORM },
          body: 'grant_type=urn:ietf:params:oauth:grant-type:token-exchange&subject_token=a.b.c&subject_token_type=urn:ietf:params:oauth:token-type:access_token',
        },
      ],
      [
        '/token',
        {
          method: 'POST',
          headers: { ...basic, 'content-type': FORM },
          body: 'grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=%ff',
        },
      ],
      ['/approvals', json(basic, '{')],
      ['/approvals', json(basic, JSON.stringify({ action: 5 }))],
      [
        '/approvals',
        json({ ...basic, authorization: 'Bearer a.b.c' }, JSON.stringify({ action: 'x', detail: [1, 2] })),
      ],
      ['/approvals/%00', { headers: basic }],
      ['/ssf/stream', json(basic, JSON.stringify({ delivery: 'carrier-pigeon' }))],
      ['/ssf/poll', json(basic, JSON.stringify({ ack: 'not-a-list' }))],
      ['/ssf/poll', json(basic, '[]')],
      [`/webhooks/svc/${client_id}`, post('hello', 'text/plain')],
      [`/webhooks/svc/${client_id}`, post('{', 'application/json')],
      ['/orgs/me', json(org, '{"name": null}', 'PATCH')],
      ['/orgs/me', json(org, '"just a string"', 'PATCH')],
      [
        '/orgs/clients',
        json(
          org,
          JSON.stringify({
            client_name: 'c',
            client_type: 'confidential',
            redirect_uris: ['javascript:alert(1)'],
          }),
        ),
      ],
      ['/orgs/clients/cli_nobody/workload-binding', json(org, JSON.stringify({ scheme: 'spiffe' }))],
      [
        `/orgs/clients/${client_id}/workload-binding`,
        json(
          org,
          JSON.stringify({
            scheme: 'spiffe',
            external_id: 'spiffe://a/b',
            issuer: 'x',
            jwks_uri: 'not a url',
            token: 'x',
          }),
        ),
      ],
      [
        `/orgs/clients/${client_id}/lifecycle-url`,
        json(org, JSON.stringify({ lifecycle_webhook_url: 'ftp://x' })),
      ],
      ['/orgs/kyb', json(org, JSON.stringify({ domain: '../etc/passwd', entity_name: 'x' }))],
      ['/orgs/agents/screen', json(org, JSON.stringify({ did: 5 }))],
      ['/orgs/members/invite', json(org, JSON.stringify({ email: 'not-an-email', role: 'admin' }))],
      ['/orgs/members/%00', { method: 'DELETE', headers: org }],
      ['/register', json(org, '{')],
      ['/register', json(org, JSON.stringify({ redirect_uris: [5] }))],
      ['/device/qr.svg?user_code=%00', undefined],
      ['/device_authorization', post('client_id=nobody&scope=openid')],
      ['/.well-known/svc-constitution/%00.json', undefined],
      ['/manage/v1/users', { headers: { 'x-admin-token': ADMIN } }],
      [
        '/manage/v1/users/usr_x/disable',
        json({ 'x-admin-token': ADMIN }, JSON.stringify({ reason: 'boredom' })),
      ],
      ['/manage/v1/reconcile?hours=abc', { headers: { 'x-admin-token': ADMIN } }],
      ['/manage/v1/lifecycle-deliveries?limit=0', { headers: { 'x-admin-token': ADMIN } }],
      ['/authorize?response_type=code&client_id=x&max_uses=0', undefined],
    ]
    for (const [path, init] of cases) {
      const res = await call(path, init)
      const text = await res.text()
      assert.ok(
        res.status >= 400 && res.status < 500,
        `${init?.method ?? 'GET'} ${path} answered ${res.status}: ${text}`,
      )
      if (res.headers.get('content-type')?.startsWith('application/json')) {
        const body = JSON.parse(text) as Record<string, unknown>
        assert.equal(typeof body.error, 'string', `${path}: ${text}`)
        assert.equal(typeof body.error_description, 'string', `${path}: ${text}`)
      }
    }
  })
})
