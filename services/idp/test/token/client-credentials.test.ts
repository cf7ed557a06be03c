import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import * as oauth from 'oauth4webapi'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://agent.example.com/callback'

describe('client_credentials (RFC 6749 §4.4)', () => {
  let service: RunningService<IdpConfig>
  let agent: Awaited<ReturnType<typeof registerClient>>
  let api: Awaited<ReturnType<typeof registerClient>>
  let as: oauth.AuthorizationServer

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    agent = await registerClient(service, {
      client_name: 'Agent',
      first_party: false,
      redirect_uris: [CALLBACK],
    })
    api = await registerClient(service, { client_name: 'API', first_party: false, redirect_uris: [CALLBACK] })
    as = await oauth.processDiscoveryResponse(
      new URL(service.url),
      await oauth.discoveryRequest(new URL(service.url), { [oauth.allowInsecureRequests]: true }),
    )
  })
  after(async () => service.close())

  /** What a resource server does with a bearer token: oauth4webapi's RFC 9068 validation. */
  const validate = (token: string, audience: string) =>
    oauth.validateJwtAccessToken(
      as,
      new Request(`${service.url}/api`, { headers: { authorization: `Bearer ${token}` } }),
      audience,
      { [oauth.allowInsecureRequests]: true },
    )

  it('issues a JWT access token for the client itself, with no refresh token', async () => {
    assert.ok(as.grant_types_supported?.includes('client_credentials'))
    const tokens = await oidc.clientCredentialsGrant(agent.config, { scope: 'tasks:read tasks:write' })
    assert.equal(tokens.token_type, 'bearer')
    assert.equal(tokens.expires_in, 600)
    assert.equal(tokens.refresh_token, undefined)
    assert.equal(tokens.id_token, undefined)
    const claims = await validate(tokens.access_token, agent.clientId)
    assert.equal(claims.sub, agent.clientId)
    assert.equal(claims.client_id, agent.clientId)
    assert.equal(claims.scope, 'tasks:read tasks:write')
    assert.ok(claims.jti)

    // no user behind it: /userinfo refuses, introspection describes the client's token
    await assert.rejects(
      oidc.fetchUserInfo(agent.config, tokens.access_token, oidc.skipSubjectCheck),
      (err: Error & { status?: number }) => err.status === 401,
    )
    const info = await oidc.tokenIntrospection(agent.config, tokens.access_token)
    assert.equal(info.active, true)
    assert.equal(info.sub, agent.clientId)
    assert.equal(info.sid, undefined)
  })

  it('issues for another registered client as audience, which alone may introspect it', async () => {
    const tokens = await oidc.clientCredentialsGrant(agent.config, { audience: api.clientId })
    const claims = await validate(tokens.access_token, api.clientId)
    assert.equal(claims.aud, api.clientId)
    assert.equal(claims.sub, agent.clientId)
    assert.equal((await oidc.tokenIntrospection(api.config, tokens.access_token)).active, true)
    assert.deepEqual(await oidc.tokenIntrospection(agent.config, tokens.access_token), { active: false })
    await assert.rejects(validate(tokens.access_token, agent.clientId), /aud/)
  })

  it('describes a platform resource’s token to the first-party confidential client on its origin, and to no other', async () => {
    const resource = 'https://rental.example.com'
    const registered = await fetch(`${service.url}/manage/v1/resources`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: resource, name: 'Rental API' }),
    })
    assert.equal(registered.status, 201)
    const server = await registerClient(service, {
      client_name: 'Rental console',
      redirect_uris: [`${resource}/auth/callback`],
    })
    const elsewhere = await registerClient(service, { client_name: 'Elsewhere', redirect_uris: [CALLBACK] })
    const thirdParty = await registerClient(service, {
      client_name: 'Same origin, third party',
      first_party: false,
      redirect_uris: [`${resource}/other`],
    })
    const tokens = await oidc.clientCredentialsGrant(agent.config, { resource })
    assert.equal((await validate(tokens.access_token, resource)).aud, resource)
    const info = await oidc.tokenIntrospection(server.config, tokens.access_token)
    assert.equal(info.active, true)
    assert.equal(info.aud, resource)
    for (const other of [elsewhere, thirdParty])
      assert.deepEqual(await oidc.tokenIntrospection(other.config, tokens.access_token), { active: false })
  })

  it('refuses user scopes, unknown audiences and resources, and public clients', async () => {
    const refusals: Array<[Record<string, string>, string]> = [
      [{ scope: 'openid' }, 'invalid_scope'],
      [{ scope: 'tasks:read offline_access' }, 'invalid_scope'],
      [{ scope: 'bad"scope' }, 'invalid_scope'],
      [{ audience: 'cli_nobody' }, 'invalid_target'],
      [{ resource: 'https://api.example.com/' }, 'invalid_target'],
    ]
    for (const [parameters, error] of refusals)
      await assert.rejects(
        oidc.clientCredentialsGrant(agent.config, parameters),
        (err: Error & { error?: string }) => err.error === error,
        JSON.stringify(parameters),
      )
    const spa = await registerClient(service, {
      client_name: 'SPA',
      client_type: 'public',
      token_endpoint_auth_method: 'none',
      redirect_uris: [CALLBACK],
    })
    const res = await fetch(`${service.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: spa.clientId }).toString(),
    })
    assert.equal(res.status, 400)
    assert.equal(((await res.json()) as { error: string }).error, 'unauthorized_client')
  })
})
