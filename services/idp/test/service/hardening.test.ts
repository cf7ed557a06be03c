import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN } from '@svc/testing/idp-flow'
import { asOrg, signUpOrg } from '@svc/testing/idp-orgs'

interface Operation {
  security?: Array<Record<string, unknown>>
  requestBody?: unknown
  responses?: Record<string, unknown>
}
type OpenApi = { paths: Record<string, Record<string, Operation>> }

/** A 4XX in RFC 6749's shape with the expected status and code. */
async function refused(res: Response, status: number, code: string, what: string) {
  const text = await res.text()
  assert.equal(res.status, status, `${what}: ${text}`)
  const body = JSON.parse(text) as Record<string, unknown>
  assert.equal(body.error, code, `${what}: ${text}`)
  assert.equal(typeof body.error_description, 'string', what)
}

describe('idp hardening: raw webhooks, finite numbers, authentication before validation', () => {
  let service: RunningService<IdpConfig>
  let openapi: OpenApi
  let org: ReturnType<typeof asOrg>
  let client: { client_id: string; webhook_secret: string }

  before(async () => {
    service = await startService(idp, testEnv({ IDP_ADMIN_TOKEN: ADMIN }), { fresh: true })
    openapi = (await request(`${service.url}/openapi.json`)).body as unknown as OpenApi
    org = asOrg(service, (await signUpOrg(service, 'Hardened')).api_key)
    const created = await org('POST', '/orgs/clients', {
      client_name: 'Relay',
      client_type: 'confidential',
      redirect_uris: ['https://relay.example.com/cb'],
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    client = created.body as unknown as typeof client
  })
  after(async () => service.close())

  it('checks a relayed webhook over its raw bytes whatever the content type, or with none', async () => {
    const relay = (body: string | undefined, type: string | undefined, signature?: string) =>
      fetch(`${service.url}/webhooks/svc/${client.client_id}`, {
        method: 'POST',
        headers: {
          ...(type ? { 'content-type': type } : {}),
          ...(signature ? { 'x-svc-signature': signature } : {}),
        },
        ...(body !== undefined ? { body } : {}),
      })
    const sign = (raw: string) =>
      `sha256=${createHmac('sha256', client.webhook_secret).update(raw).digest('hex')}`
    const FORM = 'application/x-www-form-urlencoded'

    await refused(await relay(undefined, undefined), 403, 'access_denied', 'no body, no signature')
    await refused(await relay('a=1&b=2', FORM), 403, 'access_denied', 'form body, no signature')
    await refused(await relay('a=1', FORM, sign('a=2')), 403, 'access_denied', 'form body, bad signature')
    await refused(await relay(undefined, undefined, sign('')), 400, 'invalid_request', 'signed empty body')
    await refused(await relay('a=1', FORM, sign('a=1')), 400, 'invalid_request', 'signed form body')
    // a JSON envelope sent as text/plain is still checked over its bytes and read
    const envelope = JSON.stringify({ type: 'receipt.other', subject_tag: 's', data: { hash: 'h' } })
    const read = await relay(envelope, 'text/plain', sign(envelope))
    assert.equal(read.status, 202, await read.clone().text())
    assert.deepEqual(await read.json(), { status: 'ignored' })
  })

  it('refuses numbers that are not finite instead of failing on them', async () => {
    for (const hours of ['1e309', '-1e309', 'Infinity']) {
      const res = await fetch(`${service.url}/manage/v1/reconcile?hours=${hours}`, {
        headers: { 'x-admin-token': ADMIN },
      })
      await refused(res, 400, 'invalid_request', `hours=${hours}`)
    }
    const fine = await request(`${service.url}/manage/v1/reconcile?hours=2`, {
      headers: { 'x-admin-token': ADMIN },
    })
    assert.equal(fine.status, 200)
    assert.equal(fine.body.hours, 2)
  })

  it('answers 401, not a schema error, to an /orgs route without its key and with a bad body', async () => {
    const nine = [
      ['PATCH', '/orgs/me'],
      ['POST', '/orgs/agents/screen'],
      ['POST', '/orgs/clients'],
      ['POST', '/orgs/clients/{id}/lifecycle-url'],
      ['POST', '/orgs/clients/{id}/workload-binding'],
      ['PUT', '/orgs/clients/{id}/agent-model'],
      ['POST', '/orgs/resources'],
      ['POST', '/orgs/members/invite'],
      ['POST', '/orgs/kyb'],
    ]
    // every operation behind the organization key, as the OpenAPI document names them
    const guarded = Object.entries(openapi.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security?.some((s) => 'organizationKey' in s))
        .map(([method, op]) => [method.toUpperCase(), path, op] as const),
    )
    for (const [method, path] of nine)
      assert.ok(
        guarded.some(([m, p]) => m === method && p === path),
        `${method} ${path} is documented behind the key`,
      )
    for (const [method, path, op] of guarded) {
      const url = `${service.url}${path.replace(/\{[^}]+\}/g, 'x')}`
      const bodies = op.requestBody ? ['{"unknown": [1, 2]}', '{', '"text"'] : [undefined]
      for (const body of bodies)
        for (const authorization of [undefined, 'Bearer svc_org_not-a-key', 'Basic Zm9vOmJhcg=='])
          await refused(
            await fetch(url, {
              method,
              headers: {
                ...(authorization ? { authorization } : {}),
                ...(body ? { 'content-type': 'application/json' } : {}),
              },
              ...(body ? { body } : {}),
            }),
            401,
            'invalid_token',
            `${method} ${path} with ${authorization ?? 'no key'} and body ${body}`,
          )
    }
  })

  it('answers 401 to every /manage route without the admin token, before reading the body', async () => {
    const managed = Object.entries(openapi.paths).filter(([path]) => path.startsWith('/manage/'))
    assert.ok(managed.length >= 10)
    for (const [path, ops] of managed)
      for (const [method, op] of Object.entries(ops)) {
        const body = op.requestBody ? '{' : undefined
        await refused(
          await fetch(`${service.url}${path.replace(/\{[^}]+\}/g, 'x')}?hours=1e309&limit=-1`, {
            method: method.toUpperCase(),
            headers: { 'x-admin-token': 'wrong', ...(body ? { 'content-type': 'application/json' } : {}) },
            ...(body ? { body } : {}),
          }),
          401,
          'invalid_token',
          `${method.toUpperCase()} ${path}`,
        )
      }
  })

  it('answers an invitation with the status its OpenAPI document names', async () => {
    const documented = Object.keys(openapi.paths['/orgs/members/invite']!.post!.responses ?? {})
    const invited = await org('POST', '/orgs/members/invite', {
      email: 'new@hardened.example.com',
      role: 'member',
    })
    assert.ok(documented.includes(String(invited.status)), `${invited.status} in ${documented.join(', ')}`)
    assert.equal(invited.status, 201)
    assert.equal(invited.body.email, 'new@hardened.example.com')
  })

  // needs JSON type coercion off (packages/kit/src/http/server.ts, issue 16 finding 9)
  it('refuses a number where the organization name is a string', async () => {
    const signup = await request(`${service.url}/orgs/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 12345, contact_email: 'ops@numbers.example.com', accept_terms: true }),
    })
    assert.equal(signup.status, 400, JSON.stringify(signup.body))
    assert.match(String(signup.body.error_description), /body\.name/)
    const changed = await org('PATCH', '/orgs/me', { name: 12345 })
    assert.equal(changed.status, 400, JSON.stringify(changed.body))
    assert.equal((await org('GET', '/orgs/me')).body.name, 'Hardened')
  })
})
