import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, type ServiceSpec, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose'
import * as oauth from 'oauth4webapi'
import * as oidc from 'openid-client'
import QRCode from 'qrcode'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, createClient, csrfOf, registerClient, signInOnPage } from '@svc/testing/idp-flow'
import { readQr } from './qr.ts'

const CALLBACK = 'https://tv.example.com/callback'
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/
const insecure = { [oauth.allowInsecureRequests]: true }

type Registered = Awaited<ReturnType<typeof registerClient>>
type Started = oidc.DeviceAuthorizationResponse

const env = (userCodesPerMinute: string) =>
  testEnv({
    IDP_ADMIN_TOKEN: ADMIN,
    IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
    IDP_TOKEN_RATE_PER_MIN_IP: '0',
    IDP_USER_CODE_RATE_PER_MIN: userCodesPerMinute,
  })

/** A browser signed in to the demo account. */
async function signedIn(service: RunningService<IdpConfig>) {
  const jar = new CookieJar()
  const login = await jar.fetch(`${service.url}/ui/login`)
  await signInOnPage(service, jar, await login.text())
  return jar
}

describe('device authorization grant (RFC 8628)', () => {
  let service: RunningService<IdpConfig>
  /** The user's browser, signed in once: sign-in itself is limited to ten a minute. */
  let user: CookieJar
  let tv: Registered
  let partner: Registered
  let other: Registered
  let as: oauth.AuthorizationServer
  // the device codes' clock stands still unless a test moves it
  let clockMs = Date.now()

  before(async () => {
    const spec: ServiceSpec<IdpConfig> = {
      ...idp,
      readConfig: (env, common) => ({ ...idp.readConfig(env, common), now: () => new Date(clockMs) }),
    }
    service = await startService(spec, env('0'), { fresh: true })
    user = await signedIn(service)
    tv = await registerClient(service, { client_name: 'Living-room TV', redirect_uris: [CALLBACK] })
    partner = await registerClient(service, {
      client_name: 'Partner TV',
      first_party: false,
      redirect_uris: [CALLBACK],
    })
    other = await registerClient(service, { client_name: 'Other', redirect_uris: [CALLBACK] })
    as = await oauth.processDiscoveryResponse(
      new URL(service.url),
      await oauth.discoveryRequest(new URL(service.url), insecure),
    )
  })
  after(async () => service.close())

  const start = (client: Registered, scope = 'openid email') =>
    oidc.initiateDeviceAuthorization(client.config, { scope })

  /** One poll, as a device makes it: the tokens, or the error code. */
  async function poll(client: Registered, started: Started, options: oauth.TokenEndpointRequestOptions = {}) {
    const response = await oauth.deviceCodeGrantRequest(
      as,
      { client_id: client.clientId },
      oauth.ClientSecretBasic(client.secret),
      started.device_code,
      { ...options, ...insecure },
    )
    try {
      return await oauth.processDeviceCodeResponse(as, { client_id: client.clientId }, response)
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError) return { error: err.error }
      throw err
    }
  }

  /** The user opens the page the device names, signs in if asked, and allows or denies. */
  async function answer(url: string, decision: 'approve' | 'deny', jar = user) {
    let page = await jar.fetch(url)
    if (page.status === 303) {
      const login = await jar.fetch(`${service.url}${page.headers.get('location')}`)
      const back = await signInOnPage(service, jar, await login.text())
      page = await jar.fetch(`${service.url}${back}`)
    }
    const text = await page.text()
    assert.equal(page.status, 200, text)
    const answered = await jar.fetch(`${service.url}/device`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf: csrfOf(text),
        user_code: /name="user_code" value="([^"]+)"/.exec(text)![1]!,
        decision,
      }).toString(),
    })
    assert.equal(answered.status, 200)
    return { confirmation: text, result: await answered.text(), jar }
  }

  const qr = (started: Started) => fetch(started.verification_uri_qr as string)

  it('lets a signed-in user connect a first-party device, which gets its tokens once', async () => {
    assert.equal(as.device_authorization_endpoint, `${service.url}/device_authorization`)
    assert.ok(as.grant_types_supported?.includes('urn:ietf:params:oauth:grant-type:device_code'))
    const started = await start(tv, 'openid email offline_access')
    assert.match(started.user_code, USER_CODE)
    assert.equal(started.verification_uri, `${service.url}/device`)
    assert.equal(started.verification_uri_complete, `${service.url}/device?user_code=${started.user_code}`)
    assert.equal(started.verification_uri_qr, `${service.url}/device/qr.svg?user_code=${started.user_code}`)
    assert.equal(started.expires_in, 600)
    assert.equal(started.interval, 5)

    // the page asks to sign in first, then names the client, the scopes and the code
    const { confirmation, result } = await answer(
      started.verification_uri_complete!,
      'approve',
      new CookieJar(),
    )
    assert.match(confirmation, /Connect Living-room TV\?/)
    assert.match(confirmation, /See your email address/)
    assert.ok(confirmation.includes(started.user_code))
    assert.match(result, /Device connected/)

    // openid-client polls as a device would, then checks the ID token
    const tokens = await oidc.pollDeviceAuthorizationGrant(tv.config, started)
    assert.equal(tokens.token_type, 'bearer')
    assert.equal(tokens.scope, 'openid email offline_access')
    assert.ok(tokens.refresh_token)
    const claims = await oauth.validateJwtAccessToken(
      as,
      new Request(`${service.url}/api`, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
      tv.clientId,
      insecure,
    )
    assert.equal(claims.client_id, tv.clientId)
    assert.equal(claims.sub, tokens.claims()!.sub)
    assert.deepEqual(tokens.claims()!.amr, ['pwd'])
    const refreshed = await oidc.refreshTokenGrant(tv.config, tokens.refresh_token!)
    assert.ok(refreshed.access_token)

    // spent: a second redemption is refused, and the QR code is gone
    assert.deepEqual(await poll(tv, started), { error: 'invalid_grant' })
    const gone = await qr(started)
    assert.equal(gone.status, 404)
    assert.equal(((await gone.json()) as { error: string }).error, 'not_found')
  })

  it('serves the complete verification URI as an SVG QR code', async () => {
    const started = await start(tv)
    const res = await qr(started)
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'image/svg+xml')
    const svg = await res.text()
    assert.match(
      svg,
      /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1"[^>]*>.*<\/svg>\s*$/s,
    )
    assert.equal(readQr(svg), started.verification_uri_complete)
    // the library's own drawing of that text, and any spelling of the code names the same one
    assert.equal(svg, await QRCode.toString(started.verification_uri_complete!, { type: 'svg' }))
    const typed = started.user_code.toLowerCase().replace('-', ' ')
    const again = await fetch(`${service.url}/device/qr.svg?user_code=${encodeURIComponent(typed)}`)
    assert.equal(await again.text(), svg)
  })

  it('records a third-party client’s consent, seen by introspection', async () => {
    const started = await start(partner, 'openid email')
    const { confirmation } = await answer(started.verification_uri_complete!, 'approve')
    assert.match(confirmation, /Connect Partner TV\?/)
    const tokens = (await poll(partner, started)) as oauth.TokenEndpointResponse
    assert.equal(tokens.scope, 'openid email')
    assert.equal(tokens.refresh_token, undefined)
    const info = await oidc.tokenIntrospection(partner.config, tokens.access_token)
    assert.equal(info.active, true)
    const consent = info.consent as { scope: string; purpose: string; commitment: string }
    assert.equal(consent.scope, 'openid email')
    assert.match(consent.purpose, /Partner TV/)
    assert.ok(consent.commitment)
  })

  it('binds the tokens to the device’s DPoP key', async () => {
    const started = await start(tv)
    await answer(started.verification_uri_complete!, 'approve')
    const keyPair = await oauth.generateKeyPair('ES256')
    const client: oauth.Client = { client_id: tv.clientId }
    const DPoP = oauth.DPoP(client, keyPair)
    // the first proof has no nonce: the server answers with one and the device retries
    assert.deepEqual(await poll(tv, started, { DPoP }), { error: 'use_dpop_nonce' })
    const tokens = (await poll(tv, started, { DPoP })) as oauth.TokenEndpointResponse
    assert.equal(tokens.token_type, 'dpop')
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey))
    assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt })
  })

  it('answers authorization_pending, then slow_down to a device polling too fast, lengthening its interval', async () => {
    const started = await start(tv)
    assert.deepEqual(await poll(tv, started), { error: 'authorization_pending' })
    assert.deepEqual(await poll(tv, started), { error: 'slow_down' })
    // each slow_down adds 5 s: 6 s later is too soon for 10 s, 11 s later too soon for 15 s
    clockMs += 6_000
    assert.deepEqual(await poll(tv, started), { error: 'slow_down' })
    clockMs += 11_000
    assert.deepEqual(await poll(tv, started), { error: 'slow_down' })
    clockMs += 20_000
    assert.deepEqual(await poll(tv, started), { error: 'authorization_pending' })
    // polling never changed the request: the user can still allow it
    await answer(started.verification_uri_complete!, 'approve')
    assert.ok(((await poll(tv, started)) as oauth.TokenEndpointResponse).access_token)
  })

  it('answers access_denied once the user denies, and the QR code is gone', async () => {
    const started = await start(tv)
    const { result } = await answer(started.verification_uri_complete!, 'deny')
    assert.match(result, /refused access/)
    assert.deepEqual(await poll(tv, started), { error: 'access_denied' })
    assert.equal((await qr(started)).status, 404)
  })

  it('answers expired_token after 600 s; the code is then unknown to the page and the QR code', async () => {
    const started = await start(tv)
    assert.equal((await qr(started)).status, 200)
    clockMs += 601_000
    assert.deepEqual(await poll(tv, started), { error: 'expired_token' })
    assert.equal((await qr(started)).status, 404)
    const page = await user.fetch(started.verification_uri_complete!)
    assert.equal(page.status, 400)
    assert.match(await page.text(), /wrong, expired or already used/)
  })

  it('refuses a device code to any client but its own, without spending it', async () => {
    const started = await start(tv)
    await answer(started.verification_uri_complete!, 'approve')
    assert.deepEqual(await poll(other, started), { error: 'invalid_grant' })
    assert.ok(((await poll(tv, started)) as oauth.TokenEndpointResponse).access_token)
  })

  it('gives tokens to one of two simultaneous redemptions', async () => {
    const started = await start(tv)
    await answer(started.verification_uri_complete!, 'approve')
    const redeem = () =>
      fetch(`${service.url}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${tv.clientId}:${tv.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: started.device_code,
        }).toString(),
      })
    const answers = await Promise.all([redeem(), redeem()])
    assert.deepEqual(answers.map((res) => res.status).sort(), [200, 400])
    const refused = answers.find((res) => res.status === 400)!
    assert.equal(((await refused.json()) as { error: string }).error, 'invalid_grant')
  })

  it('serves a public client that sends its client_id alone', async () => {
    const created = await createClient(service, {
      client_name: 'Set-top box',
      client_type: 'public',
      token_endpoint_auth_method: 'none',
      redirect_uris: [CALLBACK],
    })
    const client = { client_id: created.body.client_id as string }
    const started = await oauth.processDeviceAuthorizationResponse(
      as,
      client,
      await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: 'openid' }, insecure),
    )
    await answer(started.verification_uri_complete!, 'approve')
    const tokens = await oauth.processDeviceCodeResponse(
      as,
      client,
      await oauth.deviceCodeGrantRequest(as, client, oauth.None(), started.device_code, insecure),
    )
    assert.equal(tokens.scope, 'openid')
  })

  it('refuses bad device authorization and token requests', async () => {
    const basic = `Basic ${Buffer.from(`${tv.clientId}:${tv.secret}`).toString('base64')}`
    const post = (path: string, fields: Record<string, string>, auth = basic) =>
      fetch(`${service.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        body: new URLSearchParams(fields).toString(),
      })
    const created = await post('/device_authorization', { scope: 'openid' })
    assert.equal(created.status, 200)
    assert.equal(created.headers.get('cache-control'), 'no-store')
    for (const [fields, status, error, auth] of [
      [{ scope: 'email' }, 400, 'invalid_scope', basic],
      [{ scope: 'openid admin' }, 400, 'invalid_scope', basic],
      [{ scope: 'openid', resource: 'https://nowhere.example/' }, 400, 'invalid_target', basic],
      [
        { scope: 'openid' },
        401,
        'invalid_client',
        `Basic ${Buffer.from(`${tv.clientId}:wrong`).toString('base64')}`,
      ],
    ] as const) {
      const res = await post('/device_authorization', fields, auth)
      assert.equal(res.status, status, JSON.stringify(fields))
      assert.equal(((await res.json()) as { error: string }).error, error)
    }
    const json = await fetch(`${service.url}/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basic },
      body: '{"scope":"openid"}',
    })
    assert.equal(((await json.json()) as { error: string }).error, 'invalid_request')
    for (const [fields, error] of [
      [{}, 'invalid_request'],
      [{ device_code: 'not-a-device-code' }, 'invalid_grant'],
    ] as const) {
      const res = await post('/token', {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        ...fields,
      })
      assert.equal(res.status, 400)
      assert.equal(((await res.json()) as { error: string }).error, error)
    }
    const unknown = await fetch(`${service.url}/device/qr.svg?user_code=BBBB-BBBB`)
    assert.equal(unknown.status, 404)
  })

  it('changes nothing for a wrong code or a post without its CSRF token', async () => {
    const started = await start(tv)
    const wrong = await user.fetch(`${service.url}/device?user_code=BBBB-BBBB`)
    assert.equal(wrong.status, 400)
    assert.match(await wrong.text(), /wrong, expired or already used/)
    const page = await (await user.fetch(started.verification_uri_complete!)).text()
    const form = (fields: Record<string, string>) =>
      user.fetch(`${service.url}/device`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          user_code: started.user_code,
          decision: 'approve',
          ...fields,
        }).toString(),
      })
    assert.equal((await form({})).status, 400)
    assert.equal((await form({ csrf: 'forged' })).status, 403)
    assert.equal((await form({ csrf: csrfOf(page), user_code: 'BBBB-BBBB' })).status, 400)
    assert.deepEqual(await poll(tv, started), { error: 'authorization_pending' })
    assert.equal((await qr(started)).status, 200)
  })
})

describe('device authorization: user-code guessing (RFC 8628 §5.1)', () => {
  let service: RunningService<IdpConfig>
  before(async () => {
    service = await startService(idp, env('3'), { fresh: true })
  })
  after(async () => service.close())

  it('lets an account look up only so many user codes a minute', async () => {
    const user = await signedIn(service)
    const answers: Response[] = []
    // a fixed window may reset once between two guesses: the limit holds within twice its size
    for (let guess = 0; guess < 7; guess++)
      answers.push(await user.fetch(`${service.url}/device?user_code=BBBB-BBBB`))
    const throttled = answers.find((res) => res.status === 429)
    assert.ok(throttled, answers.map((res) => res.status).join(' '))
    assert.ok(throttled.headers.get('retry-after'))
    assert.match(await throttled.text(), /Too many codes were tried/)
  })
})
