import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://partner.example.com/callback'

describe('pushed authorization requests (RFC 9126)', () => {
  let service: RunningService<IdpConfig>
  let partner: Awaited<ReturnType<typeof registerClient>>
  let console: Awaited<ReturnType<typeof registerClient>>

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    partner = await registerClient(service, {
      client_name: 'Partner',
      first_party: false,
      redirect_uris: [CALLBACK],
    })
    console = await registerClient(service, { client_name: 'Console', redirect_uris: [CALLBACK] })
  })
  after(async () => service.close())

  /** openid-client pushes the request; the browser follows the short URL it returns. */
  async function pushed(config: oidc.Configuration, extra: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: CALLBACK,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...extra,
    })
    return { url: url.toString(), verifier, state }
  }

  it('runs the code flow from a pushed request, through sign-in and consent', async () => {
    const metadata = partner.config.serverMetadata()
    assert.equal(metadata.pushed_authorization_request_endpoint, `${service.url}/par`)
    const flow = await pushed(partner.config)
    const url = new URL(flow.url)
    assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri'])
    assert.match(url.searchParams.get('request_uri')!, /^urn:ietf:params:oauth:request_uri:/)
    const user = browser(service, partner.config, CALLBACK, {
      consent: { decision: 'approve', scopes: ['email'] },
    })
    const back = new URL(await user.browse(flow.url))
    const tokens = await oidc.authorizationCodeGrant(partner.config, back, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
    })
    assert.equal(tokens.scope, 'openid email')
    assert.equal(user.consents.length, 1)

    // good for one code: the same request_uri again is refused on our own page
    const again = await user.jar.fetch(flow.url)
    assert.equal(again.status, 400)
    assert.match(await again.text(), /expired or was already used/)
  })

  it('keeps pushed prompt=login, and does not ask twice', async () => {
    const jar = new CookieJar()
    await browser(service, console.config, CALLBACK, { jar }).signIn()
    const flow = await pushed(console.config, { prompt: 'login' })
    const first = await jar.fetch(flow.url)
    assert.match(first.headers.get('location')!, /^\/ui\/login\?/, 'a live session signs in again')
    const back = new URL(await browser(service, console.config, CALLBACK, { jar }).browse(flow.url))
    assert.ok(back.searchParams.get('code'))
  })

  it('gives one code for two simultaneous uses of a request_uri', async () => {
    const jar = new CookieJar()
    await browser(service, console.config, CALLBACK, { jar }).signIn()
    const flow = await pushed(console.config)
    const answers = await Promise.all([jar.fetch(flow.url), jar.fetch(flow.url)])
    const codes = answers.filter((res) => res.headers.get('location')?.includes('code='))
    assert.equal(codes.length, 1)
  })

  it('refuses another client’s request_uri', async () => {
    const flow = await pushed(partner.config)
    const stolen = new URL(flow.url)
    stolen.searchParams.set('client_id', console.clientId)
    const res = await new CookieJar().fetch(stolen.toString())
    assert.equal(res.status, 400)
  })

  it('answers bad pushed requests with JSON errors', async () => {
    const push = (fields: Record<string, string>, auth = true) =>
      fetch(`${service.url}/par`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(auth
            ? {
                authorization: `Basic ${Buffer.from(`${partner.clientId}:${partner.secret}`).toString('base64')}`,
              }
            : {}),
        },
        body: new URLSearchParams(fields).toString(),
      })
    const good = {
      response_type: 'code',
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }
    const created = await push(good)
    assert.equal(created.status, 201)
    const body = (await created.json()) as { request_uri: string; expires_in: number }
    assert.equal(body.expires_in, 90)
    assert.equal(created.headers.get('cache-control'), 'no-store')
    for (const [fields, status, error, auth] of [
      [good, 401, 'invalid_client', false],
      [{ ...good, redirect_uri: 'https://evil.example/cb' }, 400, 'invalid_request', true],
      [{ ...good, code_challenge_method: 'plain' }, 400, 'invalid_request', true],
      [{ ...good, scope: 'openid admin' }, 400, 'invalid_scope', true],
      [{ ...good, resource: 'https://nowhere.example/' }, 400, 'invalid_target', true],
      [{ ...good, response_type: 'token' }, 400, 'unsupported_response_type', true],
      [{ ...good, request_uri: body.request_uri }, 400, 'invalid_request', true],
    ] as const) {
      const res = await push(fields, auth)
      assert.equal(res.status, status, JSON.stringify(fields))
      assert.equal(((await res.json()) as { error: string }).error, error)
    }
  })
})
