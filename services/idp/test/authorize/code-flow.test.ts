import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'
import type { IdpConfig } from '../../src/config.ts'

const CALLBACK = 'http://127.0.0.1:9/callback'

describe('OpenID Connect code flow, driven by openid-client', () => {
  let service: RunningService<IdpConfig>
  let config: oidc.Configuration
  let clientId: string

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    ;({ config, clientId } = await registerClient(service, { redirect_uris: [CALLBACK] }))
  })
  after(async () => service.close())

  /** A fresh browser (its own cookies) for each flow. */
  const fresh = () => browser(service, config, CALLBACK)
  const start = (extra: Record<string, string> = {}) => fresh().start(extra)
  const browse = (url: string) => fresh().browse(url)

  it('publishes discovery metadata the library accepts, with S256 only', () => {
    const metadata = config.serverMetadata()
    assert.equal(metadata.issuer, service.url)
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256'])
    assert.equal(metadata.authorization_response_iss_parameter_supported, true)
  })

  it('signs in through the hosted page and exchanges the code for tokens the library validates', async () => {
    const flow = await start()
    const callback = await browse(flow.url)
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callback), {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    })
    const claims = tokens.claims()!
    assert.equal(claims.iss, service.url)
    assert.equal(claims.aud, clientId)
    assert.match(claims.sub, /^usr_/, 'a first-party client sees the public subject')
    assert.equal(claims.acr, 'urn:svc:pwd')
    assert.deepEqual(claims.amr, ['pwd'])
    assert.ok(claims.sid && claims.auth_time && claims.at_hash)
    assert.equal(tokens.token_type, 'bearer')
    assert.equal(tokens.expires_in, 600)

    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
    const { did, ...rest } = info
    assert.deepEqual(rest, { sub: claims.sub, email: DEMO_EMAIL, email_verified: true, name: 'Demo User' })
    assert.match(String(did), /^did:key:z6Mk/, 'a first-party client sees the account’s DID')

    // the code is single use
    await assert.rejects(
      oidc.authorizationCodeGrant(config, new URL(callback), {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      }),
      (err: Error & { error?: string }) => err.error === 'invalid_grant',
    )
  })

  it('refuses a wrong PKCE verifier', async () => {
    const flow = await start()
    const callback = await browse(flow.url)
    await assert.rejects(
      oidc.authorizationCodeGrant(config, new URL(callback), {
        pkceCodeVerifier: oidc.randomPKCECodeVerifier(),
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      }),
      (err: Error & { error?: string }) => err.error === 'invalid_grant',
    )
    // a refused exchange spends the code: the right verifier comes too late
    await assert.rejects(
      oidc.authorizationCodeGrant(config, new URL(callback), {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
      }),
      (err: Error & { error?: string }) => err.error === 'invalid_grant',
    )
  })

  it('answers prompt=none without a session with login_required at the redirect URI', async () => {
    const flow = await start({ prompt: 'none' })
    const res = await fetch(flow.url, { redirect: 'manual' })
    const back = new URL(res.headers.get('location')!)
    assert.equal(back.origin + back.pathname, CALLBACK)
    assert.equal(back.searchParams.get('error'), 'login_required')
    assert.equal(back.searchParams.get('state'), flow.state)
    assert.equal(back.searchParams.get('iss'), service.url)
  })

  it('shows an unknown client or an unregistered redirect URI on its own domain, never redirecting', async () => {
    const flow = await start()
    for (const [key, value] of [
      ['client_id', 'cli_unknown'],
      ['redirect_uri', 'https://evil.example/cb'],
    ] as const) {
      const url = new URL(flow.url)
      url.searchParams.set(key, value)
      const res = await fetch(url, { redirect: 'manual' })
      assert.equal(res.status, 400)
      assert.equal(res.headers.get('location'), null)
      assert.match(res.headers.get('content-type') ?? '', /text\/html/)
    }
  })

  it('sends request errors back to the client: no PKCE, an unsupported scope', async () => {
    const flow = await start()
    const noPkce = new URL(flow.url)
    noPkce.searchParams.delete('code_challenge')
    const scope = new URL(flow.url)
    scope.searchParams.set('scope', 'openid admin')
    for (const [url, error] of [
      [noPkce, 'invalid_request'],
      [scope, 'invalid_scope'],
    ] as const) {
      const res = await fetch(url, { redirect: 'manual' })
      assert.equal(res.status, 302)
      assert.equal(new URL(res.headers.get('location')!).searchParams.get('error'), error)
    }
  })

  it('refuses /userinfo without a valid token, in RFC 6750 form', async () => {
    const res = await request(`${service.url}/userinfo`, { headers: { authorization: 'Bearer not.a.token' } })
    assert.equal(res.status, 401)
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/)
  })

  it('answers bad token requests with RFC 6749 errors, never a 500', async () => {
    const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      request(`${service.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      })
    const cases: Array<[Promise<Awaited<ReturnType<typeof request>>>, number, string]> = [
      [form({ grant_type: 'authorization_code', code: 'x', client_id: clientId }), 401, 'invalid_client'],
      [form({ grant_type: 'authorization_code', code: 'x' }), 401, 'invalid_client'],
      [
        form(
          { grant_type: 'authorization_code', code: 'x' },
          { authorization: `Basic ${Buffer.from(`${clientId}:wrong`).toString('base64')}` },
        ),
        401,
        'invalid_client',
      ],
      [
        form({ grant_type: 'authorization_code', code: 'x' }, { authorization: 'Basic !!!' }),
        401,
        'invalid_client',
      ],
      [form({ code: 'x', client_id: clientId }), 400, 'invalid_request'],
      [
        request(`${service.url}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=a&grant_type=b',
        }),
        400,
        'invalid_request',
      ],
      [
        request(`${service.url}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"grant_type":"authorization_code"}',
        }),
        400,
        'invalid_request',
      ],
      [
        request(`${service.url}/token`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: 'x',
        }),
        400,
        'invalid_request',
      ],
      [request(`${service.url}/token`), 405, 'invalid_request'],
    ]
    for (const [pending, status, error] of cases) {
      const res = await pending
      assert.equal(res.status, status, JSON.stringify(res.body))
      assert.equal(res.body.error, error, JSON.stringify(res.body))
    }
    const basic = await form(
      { grant_type: 'client_credentials' },
      { authorization: `Basic ${Buffer.from(`${clientId}:wrong`).toString('base64')}` },
    )
    assert.equal(basic.headers.get('www-authenticate'), 'Basic realm="token"')
    assert.equal(basic.headers.get('cache-control'), 'no-store')
  })

  it('issues a refresh token only with offline_access, and rotates it on every use', async () => {
    const withoutOffline = await start()
    const plain = await oidc.authorizationCodeGrant(config, new URL(await browse(withoutOffline.url)), {
      pkceCodeVerifier: withoutOffline.verifier,
      expectedState: withoutOffline.state,
      expectedNonce: withoutOffline.nonce,
    })
    assert.equal(plain.refresh_token, undefined)

    const flow = await start({ scope: 'openid email offline_access' })
    const first = await oidc.authorizationCodeGrant(config, new URL(await browse(flow.url)), {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    })
    assert.ok(first.refresh_token)
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!)
    assert.ok(
      second.refresh_token && second.refresh_token !== first.refresh_token,
      'a new refresh token each time',
    )
    assert.equal(second.claims()?.sub, first.claims()?.sub)
    assert.equal(second.claims()?.auth_time, first.claims()?.auth_time, 'auth_time is the original sign-in')
    const narrowed = await oidc.refreshTokenGrant(config, second.refresh_token!, { scope: 'openid' })
    assert.equal(narrowed.scope, 'openid')
    assert.ok(narrowed.refresh_token, 'the family keeps its scope and its offline access')
    await assert.rejects(
      oidc.refreshTokenGrant(config, narrowed.refresh_token!, { scope: 'openid profile' }),
      (err: Error & { error?: string }) => err.error === 'invalid_scope',
    )
    const after = await oidc.refreshTokenGrant(config, narrowed.refresh_token!)
    assert.ok(after.refresh_token, 'a refused request leaves the refresh token usable')
  })

  it('treats a reused refresh token as theft: the whole family dies', async () => {
    const flow = await start({ scope: 'openid offline_access' })
    const first = await oidc.authorizationCodeGrant(config, new URL(await browse(flow.url)), {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    })
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!)
    const isInvalidGrant = (err: Error & { error?: string }) => err.error === 'invalid_grant'
    await assert.rejects(oidc.refreshTokenGrant(config, first.refresh_token!), isInvalidGrant)
    await assert.rejects(
      oidc.refreshTokenGrant(config, second.refresh_token!),
      isInvalidGrant,
      'the legitimate holder is cut off too',
    )
  })

  it('revokes what a code presented twice gave: the refresh family and the access token (§4.1.2)', async () => {
    for (const scope of ['openid offline_access', 'openid email']) {
      const flow = await start({ scope })
      const callback = new URL(await browse(flow.url))
      const checks = { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce }
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks)
      const sub = tokens.claims()!.sub
      assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, true)
      assert.equal((await oidc.fetchUserInfo(config, tokens.access_token, sub)).sub, sub)
      await assert.rejects(
        oidc.authorizationCodeGrant(config, callback, checks),
        (err: Error & { error?: string }) => err.error === 'invalid_grant',
      )
      if (tokens.refresh_token)
        await assert.rejects(
          oidc.refreshTokenGrant(config, tokens.refresh_token),
          (err: Error & { error?: string }) => err.error === 'invalid_grant',
        )
      assert.deepEqual(await oidc.tokenIntrospection(config, tokens.access_token), { active: false }, scope)
      await assert.rejects(
        oidc.fetchUserInfo(config, tokens.access_token, sub),
        (err: Error & { status?: number }) => err.status === 401,
        scope,
      )
    }
  })

  it('settles concurrent redemptions of one code, or of one refresh token, on exactly one success', async () => {
    const outcomes = (settled: PromiseSettledResult<unknown>[]) =>
      settled.map((s) => (s.status === 'fulfilled' ? 'ok' : (s.reason as { error?: string }).error)).sort()
    const user = fresh() // one sign-in for both flows (sign-ins are rate limited)
    const flow = await user.start({ scope: 'openid offline_access' })
    const callback = new URL(await user.browse(flow.url))
    const checks = { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce }
    const codes = await Promise.allSettled(
      [1, 2, 3].map(() => oidc.authorizationCodeGrant(config, callback, checks)),
    )
    assert.deepEqual(outcomes(codes), ['invalid_grant', 'invalid_grant', 'ok'])

    const other = await user.start({ scope: 'openid offline_access' })
    const tokens = await oidc.authorizationCodeGrant(config, new URL(await user.browse(other.url)), {
      pkceCodeVerifier: other.verifier,
      expectedState: other.state,
      expectedNonce: other.nonce,
    })
    const refreshes = await Promise.allSettled(
      [1, 2, 3].map(() => oidc.refreshTokenGrant(config, tokens.refresh_token!)),
    )
    assert.deepEqual(outcomes(refreshes), ['invalid_grant', 'invalid_grant', 'ok'])
  })

  it('revokes an access token (then /userinfo answers 401) and a refresh token with its family; always 200', async () => {
    const flow = await start({ scope: 'openid email offline_access' })
    const checks = { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce }
    const tokens = await oidc.authorizationCodeGrant(config, new URL(await browse(flow.url)), checks)
    const sub = tokens.claims()!.sub
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, sub)
    // with the email scope, a first-party client's token shows the email as /userinfo releases it
    const shown = await oidc.tokenIntrospection(config, tokens.access_token)
    assert.ok(userinfo.email)
    assert.equal(shown.email, userinfo.email)
    assert.equal(shown.email_verified, userinfo.email_verified)
    await oidc.tokenRevocation(config, tokens.access_token)
    await assert.rejects(
      oidc.fetchUserInfo(config, tokens.access_token, sub),
      (err: Error & { status?: number }) => err.status === 401,
    )

    await oidc.tokenRevocation(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' })
    await assert.rejects(
      oidc.refreshTokenGrant(config, tokens.refresh_token!),
      (err: Error & { error?: string }) => err.error === 'invalid_grant',
    )
    await oidc.tokenRevocation(config, 'not-a-token-at-all') // unknown tokens still answer 200
  })

  it('introspects for the token’s audience only; everyone else learns active: false', async () => {
    const flow = await start({ scope: 'openid offline_access' })
    const checks = { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce }
    const tokens = await oidc.authorizationCodeGrant(config, new URL(await browse(flow.url)), checks)
    const access = await oidc.tokenIntrospection(config, tokens.access_token)
    assert.equal(access.active, true)
    assert.equal(access.client_id, clientId)
    assert.equal(access.sub, tokens.claims()!.sub)
    assert.equal(access.token_type, 'Bearer')
    assert.match(String(access.did), /^did:key:/)
    assert.equal(access.consent, undefined, 'a first-party client has no per-client consent')
    assert.equal(access.email, undefined, 'no email scope: no email')
    const refresh = await oidc.tokenIntrospection(config, tokens.refresh_token!)
    assert.equal(refresh.active, true)
    assert.equal(refresh.token_type, 'refresh_token')

    const other = await request(`${service.url}/manage/v1/clients`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Other',
        client_type: 'confidential',
        first_party: true,
        redirect_uris: [CALLBACK],
      }),
    })
    const stranger = await request(`${service.url}/introspect`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${other.body.client_id}:${other.body.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: tokens.access_token }).toString(),
    })
    assert.deepEqual(stranger.body, { active: false })
    const garbage = await oidc.tokenIntrospection(config, 'garbage')
    assert.deepEqual(garbage, { active: false })
  })
})
