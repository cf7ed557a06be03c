import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { calculateJwkThumbprint, exportJWK } from 'jose'
import * as oauth from 'oauth4webapi'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token'
const AGENT_CALLBACK = 'https://agent.example.com/callback'

type Client = Awaited<ReturnType<typeof registerClient>>

describe('token exchange (RFC 8693): delegation with act', () => {
  let service: RunningService<IdpConfig>
  let agent: Client
  let api: Client
  let downstream: Client
  let as: oauth.AuthorizationServer

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    const thirdParty = (name: string, host: string) =>
      registerClient(service, {
        client_name: name,
        first_party: false,
        redirect_uris: [`https://${host}/callback`],
      })
    agent = await thirdParty('Agent', 'agent.example.com')
    api = await thirdParty('API', 'api.example.com')
    downstream = await thirdParty('Downstream', 'downstream.example.com')
    as = await oauth.processDiscoveryResponse(
      new URL(service.url),
      await oauth.discoveryRequest(new URL(service.url), { [oauth.allowInsecureRequests]: true }),
    )
  })
  after(async () => service.close())

  /** The demo user signs in to the agent and consents: the agent holds a user access token. */
  const userTokens = (scope = 'openid email profile') =>
    browser(service, agent.config, AGENT_CALLBACK, {
      consent: { decision: 'approve', scopes: ['email', 'profile'] },
    }).signIn({ scope })

  const exchange = (client: Client, params: Record<string, string>, options?: oidc.DPoPOptions) =>
    oidc.genericGrantRequest(
      client.config,
      TOKEN_EXCHANGE,
      { subject_token_type: ACCESS_TOKEN, ...params },
      options,
    )

  const validate = (token: string, audience: string) =>
    oauth.validateJwtAccessToken(
      as,
      new Request(`${service.url}/api`, { headers: { authorization: `Bearer ${token}` } }),
      audience,
      { [oauth.allowInsecureRequests]: true },
    )

  /** The OAuth error a refused exchange answers. */
  const refusal = async (client: Client, params: Record<string, string>) => {
    try {
      await exchange(client, params)
    } catch (err) {
      return (err as { error?: string }).error
    }
    throw new Error('the exchange was not refused')
  }

  it('gives the audience a token acting for the user: act, its pairwise sub, the same sid, no refresh token', async () => {
    assert.ok(as.grant_types_supported?.includes(TOKEN_EXCHANGE))
    const tokens = await userTokens()
    const original = await validate(tokens.access_token, agent.clientId)
    const exchanged = await exchange(agent, {
      subject_token: tokens.access_token,
      audience: api.clientId,
      scope: 'openid email',
    })
    assert.equal(exchanged.issued_token_type, ACCESS_TOKEN)
    assert.equal(exchanged.token_type, 'bearer')
    assert.equal(exchanged.refresh_token, undefined)
    assert.equal(exchanged.id_token, undefined)
    assert.equal(exchanged.scope, 'openid email')
    const claims = await validate(exchanged.access_token, api.clientId)
    assert.deepEqual(claims.act, { sub: agent.clientId })
    assert.equal(claims.client_id, agent.clientId)
    assert.equal(claims.sid, original.sid)
    assert.notEqual(claims.sub, original.sub, 'each audience sees its own pairwise subject')
    assert.ok((claims.exp as number) <= (original.exp as number), 'never outlives the subject token')

    // the audience introspects it and sees who acts; the user's claims come with its scope
    const info = await oidc.tokenIntrospection(api.config, exchanged.access_token)
    assert.equal(info.active, true)
    assert.deepEqual(info.act, { sub: agent.clientId })
    assert.equal(info.sub, claims.sub)
    assert.equal(info.did, undefined)
    assert.deepEqual(await oidc.tokenIntrospection(agent.config, exchanged.access_token), { active: false })
    const userinfo = await oidc.fetchUserInfo(api.config, exchanged.access_token, claims.sub)
    assert.equal(userinfo.email, 'demo@svc.local')
    assert.equal(userinfo.name, undefined, 'profile was not exchanged')
  })

  it('nests act when the audience exchanges again', async () => {
    const tokens = await userTokens()
    const first = await exchange(agent, { subject_token: tokens.access_token, audience: api.clientId })
    const second = await exchange(api, { subject_token: first.access_token, audience: downstream.clientId })
    const claims = await validate(second.access_token, downstream.clientId)
    assert.deepEqual(claims.act, { sub: api.clientId, act: { sub: agent.clientId } })
    assert.equal(claims.client_id, api.clientId)
    assert.equal((await oidc.tokenIntrospection(downstream.config, second.access_token)).active, true)
  })

  it('refuses a token not issued to the caller, wider scope, unknown audiences and wrong types', async () => {
    const tokens = await userTokens()
    const subject_token = tokens.access_token
    assert.equal(await refusal(downstream, { subject_token, audience: api.clientId }), 'invalid_grant')
    assert.equal(
      await refusal(agent, { subject_token, audience: api.clientId, scope: 'openid offline_access' }),
      'invalid_scope',
    )
    assert.equal(await refusal(agent, { subject_token, audience: 'cli_nobody' }), 'invalid_target')
    assert.equal(
      await refusal(agent, { subject_token, resource: 'https://unregistered.example.com/' }),
      'invalid_target',
    )
    assert.equal(
      await refusal(agent, {
        subject_token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      }),
      'invalid_request',
    )
    assert.equal(await refusal(agent, { subject_token: 'not-a-token' }), 'invalid_grant')
    assert.equal(
      await refusal(agent, { subject_token, actor_token: subject_token }),
      'invalid_request',
      'actor_token without its type',
    )
    assert.equal(
      await refusal(agent, { subject_token, actor_token: subject_token, actor_token_type: ACCESS_TOKEN }),
      'invalid_grant',
      'an actor token must be the caller’s own client-credentials token',
    )
    const own = await oidc.clientCredentialsGrant(agent.config, {})
    const acted = await exchange(agent, {
      subject_token,
      actor_token: own.access_token,
      actor_token_type: ACCESS_TOKEN,
    })
    assert.deepEqual((await validate(acted.access_token, agent.clientId)).act, { sub: agent.clientId })
    assert.equal(
      await refusal(agent, { subject_token: own.access_token, audience: api.clientId }),
      'invalid_target',
      'agent-to-agent login is between organizations’ clients',
    )
  })

  it('is refused when the audience’s organization denies the acting client', async () => {
    const signed = await request(`${service.url}/orgs/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Shop', contact_email: 'ops@shop.example.com', accept_terms: true }),
    })
    const key = signed.body.api_key as string
    const orgCall = (method: string, path: string, body: unknown) =>
      request(`${service.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const shop = await orgCall('POST', '/orgs/clients', {
      client_name: 'Shop API',
      client_type: 'confidential',
      redirect_uris: ['https://shop.example.com/callback'],
    })
    const tokens = await userTokens()
    const audience = shop.body.client_id as string
    assert.ok((await exchange(agent, { subject_token: tokens.access_token, audience })).access_token)
    await orgCall('PATCH', '/orgs/me', { agent_deny_list: [agent.clientId] })
    assert.equal(await refusal(agent, { subject_token: tokens.access_token, audience }), 'invalid_grant')
    await orgCall('PATCH', '/orgs/me', { agent_deny_list: [] })
  })

  it('refuses a public client, a revoked subject token and a dead session', async () => {
    const spa = await registerClient(service, {
      client_name: 'SPA',
      client_type: 'public',
      first_party: false,
      redirect_uris: ['https://spa.example.com/callback'],
    })
    const res = await request(`${service.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: TOKEN_EXCHANGE,
        client_id: spa.clientId,
        subject_token: 'x',
        subject_token_type: ACCESS_TOKEN,
      }).toString(),
    })
    assert.equal(res.status, 400)
    assert.equal(res.body.error, 'unauthorized_client')

    const revoked = await userTokens()
    await oidc.tokenRevocation(agent.config, revoked.access_token)
    assert.equal(await refusal(agent, { subject_token: revoked.access_token }), 'invalid_grant')

    const user = browser(service, agent.config, AGENT_CALLBACK, {
      consent: { decision: 'approve', scopes: ['email'] },
    })
    const live = await user.signIn()
    const exchanged = await exchange(agent, { subject_token: live.access_token, audience: api.clientId })
    await user.jar.fetch(`${service.url}/logout?${new URLSearchParams({ id_token_hint: live.id_token! })}`)
    assert.equal(await refusal(agent, { subject_token: live.access_token }), 'invalid_grant')
    assert.deepEqual(
      await oidc.tokenIntrospection(api.config, exchanged.access_token),
      { active: false },
      'the delegated token ends with the session',
    )
  })

  it('binds to the caller’s DPoP key, and a bound subject token needs its key', async () => {
    const keys = await oidc.randomDPoPKeyPair('ES256')
    const DPoP = oidc.getDPoPHandle(agent.config, keys)
    const user = browser(service, agent.config, AGENT_CALLBACK, {
      consent: { decision: 'approve', scopes: ['email'] },
    })
    const flow = await user.start()
    const bound = await oidc.authorizationCodeGrant(
      agent.config,
      new URL(await user.browse(flow.url)),
      { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce },
      undefined,
      { DPoP },
    )
    assert.equal(bound.token_type, 'dpop')
    assert.equal(await refusal(agent, { subject_token: bound.access_token }), 'invalid_grant')
    const exchanged = await exchange(
      agent,
      { subject_token: bound.access_token, audience: api.clientId },
      { DPoP },
    )
    assert.equal(exchanged.token_type, 'dpop')
    const claims = await oidc.tokenIntrospection(api.config, exchanged.access_token)
    assert.deepEqual(claims.cnf, { jkt: await calculateJwkThumbprint(await exportJWK(keys.publicKey)) })
  })
})
