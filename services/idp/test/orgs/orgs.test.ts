import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { type JsonResponse, request, testEnv } from '@svc/kit/testing'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN } from '@svc/testing/idp-flow'

const CALLBACK = 'https://shop.example.com/callback'

describe('organizations: sign-up, keys, clients, quotas and the admin', () => {
  let service: RunningService<IdpConfig>

  before(async () => {
    service = await startService(
      idp,
      testEnv({
        IDP_ADMIN_TOKEN: ADMIN,
        IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
        IDP_TOKEN_RATE_PER_MIN_IP: '0',
        IDP_REGISTER_RATE_PER_MIN: '100',
      }),
      { fresh: true },
    )
  })
  after(async () => service.close())

  const call = (method: string, path: string, key?: string, body?: unknown) =>
    request(`${service.url}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
  const admin = (method: string, path: string, body?: unknown) =>
    request(`${service.url}/manage/v1${path}`, {
      method,
      headers: {
        'x-admin-token': ADMIN,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
  const signUp = async (name: string) => {
    const res = await call('POST', '/orgs/signup', undefined, {
      name,
      contact_email: `admin@${name.toLowerCase()}.example.com`,
      accept_terms: true,
    })
    assert.equal(res.status, 201)
    return res.body as { organization_id: string; name: string; api_key: string }
  }
  const newClient = (key: string, extra: Record<string, unknown> = {}) =>
    call('POST', '/orgs/clients', key, {
      client_name: 'Shop agent',
      client_type: 'confidential',
      redirect_uris: [CALLBACK],
      ...extra,
    })
  const expectError = (res: JsonResponse, status: number, error: string) => {
    assert.equal(res.status, status, JSON.stringify(res.body))
    assert.equal(res.body.error, error)
  }
  /** openid-client's refusal of a client the idp does not know: 401 with a Basic challenge. */
  const unknownClient = (err: Error & { status?: number }) => err.status === 401
  /** client_credentials for an organization's client, through openid-client. */
  const machineToken = async (client: { client_id: string; client_secret: string }) => {
    const config = await oidc.discovery(
      new URL(service.url),
      client.client_id,
      client.client_secret,
      oidc.ClientSecretBasic(client.client_secret),
      { execute: [oidc.allowInsecureRequests] },
    )
    return oidc.clientCredentialsGrant(config, {})
  }

  it('signs up only with accept_terms, shows the key once, and knows itself by it', async () => {
    expectError(
      await call('POST', '/orgs/signup', undefined, { name: 'Acme', contact_email: 'a@acme.example.com' }),
      400,
      'invalid_request',
    )
    expectError(
      await call('POST', '/orgs/signup', undefined, {
        name: 'Acme',
        contact_email: 'a@acme.example.com',
        accept_terms: false,
      }),
      400,
      'invalid_request',
    )
    const acme = await signUp('Acme')
    assert.match(acme.api_key, /^svc_org_[A-Za-z0-9_-]{43}$/)
    const me = await call('GET', '/orgs/me', acme.api_key)
    assert.equal(me.status, 200)
    assert.equal(me.body.organization_id, acme.organization_id)
    assert.match(me.body.did as string, /^did:key:z6Mk/)
    assert.equal(me.body.domain_verified, false)
    assert.deepEqual(me.body.agent_deny_list, [])
    assert.equal(me.body.max_clients, 10)
    assert.equal(me.body.token_rate_limit_per_min, 30)
    assert.equal(JSON.stringify(me.body).includes(acme.api_key), false, 'the key is never shown again')
    expectError(await call('GET', '/orgs/me'), 401, 'invalid_token')
    expectError(await call('GET', '/orgs/me', `svc_org_${'A'.repeat(43)}`), 401, 'invalid_token')

    const changed = await call('PATCH', '/orgs/me', acme.api_key, {
      agent_deny_list: ['did:key:z6MkBad', 'did:key:z6MkBad'],
      require_member_mfa: true,
    })
    assert.deepEqual(changed.body.agent_deny_list, ['did:key:z6MkBad'])
    assert.equal(changed.body.require_member_mfa, true)
    expectError(await call('PATCH', '/orgs/me', acme.api_key, {}), 400, 'invalid_request')
    expectError(await call('PATCH', '/orgs/me', acme.api_key, { max_clients: 99 }), 400, 'invalid_request')

    const rotated = await call('POST', '/orgs/rotate-key', acme.api_key)
    assert.equal(rotated.status, 200)
    expectError(await call('GET', '/orgs/me', acme.api_key), 401, 'invalid_token')
    assert.equal((await call('GET', '/orgs/me', rotated.body.api_key as string)).status, 200)
  })

  it('keeps each organization to its own clients: another’s answers 404 and stays as it was', async () => {
    const shop = await signUp('Shop')
    const rival = await signUp('Rival')
    expectError(await newClient(shop.api_key, { first_party: true }), 400, 'invalid_request')
    expectError(await newClient(shop.api_key, { subject_type: 'public' }), 400, 'invalid_request')
    const created = await newClient(shop.api_key)
    assert.equal(created.status, 201)
    const client = created.body as { client_id: string; client_secret: string }
    assert.equal(created.body.subject_type, 'pairwise')
    assert.equal(created.body.first_party, false)
    assert.equal((await machineToken(client)).token_type, 'bearer')

    const listed = await call('GET', '/orgs/clients', shop.api_key)
    assert.deepEqual(
      (listed.body.clients as Array<{ client_id: string }>).map((c) => c.client_id),
      [client.client_id],
    )
    assert.deepEqual((await call('GET', '/orgs/clients', rival.api_key)).body.clients, [])
    const id = client.client_id
    for (const [method, path] of [
      ['GET', `/orgs/clients/${id}`],
      ['DELETE', `/orgs/clients/${id}`],
      ['POST', `/orgs/clients/${id}/rotate-secret`],
      ['POST', `/orgs/clients/${id}/rotate-webhook-secret`],
    ] as const)
      expectError(await call(method, path, rival.api_key), 404, 'not_found')
    assert.equal((await machineToken(client)).token_type, 'bearer', 'the secret was not rotated')

    const rotated = await call('POST', `/orgs/clients/${id}/rotate-secret`, shop.api_key)
    await assert.rejects(machineToken(client), unknownClient)
    const renewed = { client_id: id, client_secret: rotated.body.client_secret as string }
    assert.equal((await machineToken(renewed)).token_type, 'bearer')

    assert.equal((await call('DELETE', `/orgs/clients/${id}`, shop.api_key)).status, 204)
    expectError(await call('GET', `/orgs/clients/${id}`, shop.api_key), 404, 'not_found')
    await assert.rejects(machineToken(renewed), unknownClient)
  })

  it('caps clients and tokens per organization, as the admin sets them', async () => {
    const small = await signUp('Small')
    const quota = await admin('POST', `/organizations/${small.organization_id}/quota`, {
      max_clients: 1,
      token_rate_limit_per_min: 2,
    })
    assert.equal(quota.status, 200)
    assert.equal(quota.body.max_clients, 1)
    const first = (await newClient(small.api_key)).body as { client_id: string; client_secret: string }
    expectError(await newClient(small.api_key), 429, 'quota_exceeded')
    expectError(
      await call('POST', '/register', small.api_key, { redirect_uris: [CALLBACK] }),
      429,
      'quota_exceeded',
    )
    await machineToken(first)
    await machineToken(first)
    const over = await request(`${service.url}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${first.client_id}:${first.client_secret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    })
    expectError(over, 429, 'slow_down')
    assert.equal(over.headers.get('retry-after'), '60')
    expectError(await admin('POST', '/organizations/org_nobody/quota', { max_clients: 3 }), 404, 'not_found')
    expectError(
      await admin('POST', `/organizations/${small.organization_id}/quota`, {}),
      400,
      'invalid_request',
    )
  })

  it('disables an organization: its key and its clients stop working until it is enabled', async () => {
    const gone = await signUp('Gone')
    const client = (await newClient(gone.api_key)).body as { client_id: string; client_secret: string }
    const listed = await admin('GET', '/organizations')
    assert.ok(
      (listed.body.organizations as Array<{ organization_id: string }>).some(
        (o) => o.organization_id === gone.organization_id,
      ),
    )

    assert.equal((await admin('POST', `/organizations/${gone.organization_id}/disable`)).body.disabled, true)
    expectError(await call('GET', '/orgs/me', gone.api_key), 403, 'access_denied')
    await assert.rejects(machineToken(client), unknownClient)
    const authorize = await fetch(
      `${service.url}/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid' })}`,
      { redirect: 'manual' },
    )
    assert.equal(authorize.status, 400)
    assert.match(await authorize.text(), /Unknown application/)
    const revoke = await request(`${service.url}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: 'x',
        client_id: client.client_id,
        client_secret: client.client_secret,
      }).toString(),
    })
    expectError(revoke, 401, 'invalid_client')

    assert.equal((await admin('POST', `/organizations/${gone.organization_id}/enable`)).body.disabled, false)
    assert.equal((await machineToken(client)).token_type, 'bearer')
    expectError(await admin('POST', '/organizations/org_nobody/disable'), 404, 'not_found')
  })

  it('registers the organization’s own resources, served as RFC 9728 metadata', async () => {
    const api = await signUp('Api')
    const other = await signUp('Other')
    const body = {
      identifier: 'https://api.example.com/mcp',
      name: 'Orders MCP',
      scopes: ['orders:read'],
      mcp: true,
    }
    const created = await call('POST', '/orgs/resources', api.api_key, body)
    assert.equal(created.status, 201)
    const id = created.body.id as string
    const metadata = await request(`${service.url}/.well-known/oauth-protected-resource/${id}`)
    assert.equal(metadata.body.resource, body.identifier)
    assert.deepEqual(metadata.body.authorization_servers, [service.url])
    assert.equal(
      (await call('POST', '/orgs/resources', other.api_key, body)).status,
      409,
      'an identifier is registered once',
    )
    expectError(
      await call('POST', '/orgs/resources', api.api_key, {
        ...body,
        identifier: 'https://x.example.com/?q=1',
      }),
      400,
      'invalid_request',
    )
    assert.equal(((await call('GET', '/orgs/resources', api.api_key)).body.resources as unknown[]).length, 1)
    assert.deepEqual((await call('GET', '/orgs/resources', other.api_key)).body.resources, [])
    expectError(await call('DELETE', `/orgs/resources/${id}`, other.api_key), 404, 'not_found')
    assert.equal((await call('DELETE', `/orgs/resources/${id}`, api.api_key)).status, 204)
    assert.equal((await request(`${service.url}/.well-known/oauth-protected-resource/${id}`)).status, 404)
  })

  it('registers clients dynamically (RFC 7591) with the organization key', async () => {
    const dyn = await signUp('Dyn')
    const config = await oidc.dynamicClientRegistration(
      new URL(service.url),
      // openid-client authenticates a registered client with client_secret_post unless told otherwise
      {
        redirect_uris: [CALLBACK],
        client_name: 'Registered agent',
        token_endpoint_auth_method: 'client_secret_post',
      },
      undefined,
      { initialAccessToken: dyn.api_key, execute: [oidc.allowInsecureRequests] },
    )
    const metadata = config.clientMetadata()
    assert.equal(metadata.subject_type, 'pairwise')
    assert.equal(metadata.require_pkce, true)
    assert.equal(metadata.token_endpoint_auth_method, 'client_secret_post')
    assert.equal(metadata.client_secret_expires_at, 0)
    assert.equal((await oidc.clientCredentialsGrant(config, {})).token_type, 'bearer')
    const listed = await call('GET', '/orgs/clients', dyn.api_key)
    assert.equal((listed.body.clients as unknown[]).length, 1)

    const register = (body: unknown, key = dyn.api_key) => call('POST', '/register', key, body)
    const plain = await register({ redirect_uris: [CALLBACK], software_id: 'ignored (RFC 7591 §2)' })
    assert.equal(plain.status, 201)
    assert.equal(plain.body.token_endpoint_auth_method, 'client_secret_basic', 'the RFC 7591 default')
    assert.match(plain.body.client_secret as string, /^cs_/)
    assert.equal(typeof plain.body.client_id_issued_at, 'number')
    const withHome = await register({ redirect_uris: [CALLBACK], client_uri: 'https://shop.example.com/' })
    assert.equal(withHome.status, 201)
    assert.equal(withHome.body.client_uri, 'https://shop.example.com/', 'the registered metadata is answered')
    expectError(
      await register({ redirect_uris: [CALLBACK], client_uri: 'ftp://shop.example.com/' }),
      400,
      'invalid_client_metadata',
    )
    expectError(
      await register({ redirect_uris: ['http://shop.example.com/cb'] }),
      400,
      'invalid_redirect_uri',
    )
    expectError(await register({ redirect_uris: [] }), 400, 'invalid_client_metadata')
    expectError(
      await register({ redirect_uris: [CALLBACK], token_endpoint_auth_method: 'tls_client_auth' }),
      400,
      'invalid_client_metadata',
    )
    expectError(await register({ redirect_uris: [CALLBACK] }, 'svc_org_wrong'), 401, 'invalid_token')
  })
})
