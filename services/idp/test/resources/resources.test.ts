import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import * as oauth from 'oauth4webapi'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://agent.example.com/callback'
const TOOLS = 'https://tools.example.com/mcp'

describe('resources: RFC 8707 targets and RFC 9728 metadata', () => {
  let service: RunningService<IdpConfig>
  let agent: Awaited<ReturnType<typeof registerClient>>
  let as: oauth.AuthorizationServer
  let resourceId: string
  const admin = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    request(`${service.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        'x-admin-token': init.token ?? ADMIN,
        ...(init.body ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body ? { body: JSON.stringify(init.body) } : {}),
    })

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    agent = await registerClient(service, { client_name: 'Agent', redirect_uris: [CALLBACK] })
    as = await oauth.processDiscoveryResponse(
      new URL(service.url),
      await oauth.discoveryRequest(new URL(service.url), { [oauth.allowInsecureRequests]: true }),
    )
  })
  after(async () => service.close())

  const validate = (token: string, audience: string) =>
    oauth.validateJwtAccessToken(
      as,
      new Request(TOOLS, { headers: { authorization: `Bearer ${token}` } }),
      audience,
      { [oauth.allowInsecureRequests]: true },
    )

  it('registers a resource (admin only) and serves its RFC 9728 metadata', async () => {
    const created = await admin('/manage/v1/resources', {
      method: 'POST',
      body: { identifier: TOOLS, name: 'Tools', scopes: ['tools:call', 'tools:list'], mcp: true },
    })
    assert.equal(created.status, 201)
    resourceId = created.body.id as string
    assert.match(resourceId, /^res_/)
    assert.equal((await admin('/manage/v1/resources', { token: 'wrong-admin-token-000000' })).status, 401)
    const listed = await admin('/manage/v1/resources')
    assert.deepEqual(
      (listed.body.resources as Array<{ identifier: string }>).map((r) => r.identifier),
      [TOOLS],
    )

    // oauth4webapi reads the metadata as a client would, and checks it names the resource
    const metadata = await oauth.processResourceDiscoveryResponse(
      new URL(TOOLS),
      await fetch(`${service.url}/.well-known/oauth-protected-resource/${resourceId}`),
    )
    assert.deepEqual(metadata.authorization_servers, [service.url])
    assert.deepEqual(metadata.scopes_supported, ['tools:call', 'tools:list'])
    assert.equal(metadata.resource_name, 'Tools')
    assert.equal((await fetch(`${service.url}/.well-known/oauth-protected-resource/res_nope`)).status, 404)
  })

  it('refuses bad registrations', async () => {
    for (const [body, status] of [
      [{ identifier: 'not a uri', name: 'x' }, 400],
      [{ identifier: 'https://a.example/x?y=1', name: 'x' }, 400],
      [{ identifier: 'https://a.example/x#f', name: 'x' }, 400],
      [{ identifier: 'https://a.example/x', name: 'x', scopes: ['bad"scope'] }, 400],
      [{ identifier: TOOLS, name: 'again' }, 409],
      [{ identifier: 'https://a.example/x', name: 'x', extra: 1 }, 400],
    ] as const) {
      const res = await admin('/manage/v1/resources', { method: 'POST', body })
      assert.equal(res.status, status, JSON.stringify(body))
      assert.equal(typeof res.body.error, 'string')
    }
  })

  it('issues client-credentials tokens for the resource, within its scopes', async () => {
    const tokens = await oidc.clientCredentialsGrant(agent.config, { resource: TOOLS, scope: 'tools:call' })
    const claims = await validate(tokens.access_token, TOOLS)
    assert.equal(claims.aud, TOOLS)
    assert.equal(claims.client_id, agent.clientId)
    for (const [parameters, error] of [
      [{ resource: TOOLS, scope: 'files:write' }, 'invalid_scope'],
      [{ resource: 'https://unknown.example/' }, 'invalid_target'],
      [{ resource: TOOLS, audience: agent.clientId }, 'invalid_request'],
    ] as const)
      await assert.rejects(
        oidc.clientCredentialsGrant(agent.config, parameters),
        (err: Error & { error?: string }) => err.error === error,
      )
  })

  it('sets the audience of a user’s tokens from resource at /authorize, refresh included', async () => {
    const user = browser(service, agent.config, CALLBACK)
    const tokens = await user.signIn({ resource: TOOLS, scope: 'openid tools:list offline_access' })
    assert.equal((await validate(tokens.access_token, TOOLS)).client_id, agent.clientId)
    assert.equal(tokens.claims()!.aud, agent.clientId, 'the ID token stays the client’s')
    const refreshed = await oidc.refreshTokenGrant(agent.config, tokens.refresh_token!)
    assert.equal((await validate(refreshed.access_token, TOOLS)).aud, TOOLS)

    const flow = await user.start({ resource: 'https://unknown.example/' })
    const back = new URL((await user.jar.fetch(flow.url)).headers.get('location')!)
    assert.equal(back.searchParams.get('error'), 'invalid_target')
    assert.equal(back.searchParams.get('state'), flow.state)
  })

  it('stops issuing for a removed resource, refresh included', async () => {
    const user = browser(service, agent.config, CALLBACK)
    const tokens = await user.signIn({ resource: TOOLS, scope: 'openid offline_access' })
    assert.equal((await admin(`/manage/v1/resources/${resourceId}`, { method: 'DELETE' })).status, 204)
    assert.equal((await admin(`/manage/v1/resources/${resourceId}`, { method: 'DELETE' })).status, 404)
    assert.equal(
      (await fetch(`${service.url}/.well-known/oauth-protected-resource/${resourceId}`)).status,
      404,
    )
    await assert.rejects(
      oidc.clientCredentialsGrant(agent.config, { resource: TOOLS }),
      (err: Error & { error?: string }) => err.error === 'invalid_target',
    )
    await assert.rejects(
      oidc.refreshTokenGrant(agent.config, tokens.refresh_token!),
      (err: Error & { error?: string }) => err.error === 'invalid_target',
    )
  })
})
