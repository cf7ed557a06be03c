import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import type * as oidc from 'openid-client'
import { Secret, TOTP } from 'otpauth'
import { idp } from '../../src/app.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, csrfOf, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'http://127.0.0.1:9/callback'
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})

describe('TOTP second factor', () => {
  let service: RunningService<IdpConfig>
  let config: oidc.Configuration
  let totp: TOTP
  /**
   * A code is accepted once, and only within one step of now: the tests use the steps -1, 0 and +1
   * in order, all inside one 30-second period (before() waits for one with room left).
   */
  let step = -1
  const nextCode = () => totp.generate({ timestamp: Date.now() + step++ * 30_000 })

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    ;({ config } = await registerClient(service, { redirect_uris: [CALLBACK] }))
    const left = 30_000 - (Date.now() % 30_000)
    if (left < 6_000) await new Promise((r) => setTimeout(r, left + 50))
  })
  after(async () => service.close())

  async function passwordSignIn(jar: CookieJar) {
    const page = await (await jar.fetch(`${service.url}/ui/login`)).text()
    return jar.fetch(
      `${service.url}/ui/login`,
      form({ email: DEMO_EMAIL, password: service.ctx.config.demoPassword, csrf: csrfOf(page) }),
    )
  }

  it('enrols an authenticator from the account page, confirmed by its first code', async () => {
    const jar = new CookieJar()
    assert.equal((await passwordSignIn(jar)).status, 303)
    const account = await (await jar.fetch(`${service.url}/ui/account`)).text()
    const setup = await (
      await jar.fetch(`${service.url}/ui/account/totp`, form({ csrf: csrfOf(account) }))
    ).text()
    const secret = /<code data-secret>([A-Z2-7]+)<\/code>/.exec(setup)![1]!
    assert.match(setup, /otpauth:\/\/totp\/svc:/)
    totp = new TOTP({
      issuer: 'svc',
      algorithm: 'SHA1',
      digits: 6,
      period: 30,
      secret: Secret.fromBase32(secret),
    })
    const wrong = await jar.fetch(
      `${service.url}/ui/account/totp/confirm`,
      form({ csrf: csrfOf(setup), code: '000000' }),
    )
    assert.equal(wrong.status, 400)
    const again = await (
      await jar.fetch(`${service.url}/ui/account/totp`, form({ csrf: csrfOf(account) }))
    ).text()
    totp = new TOTP({
      issuer: 'svc',
      algorithm: 'SHA1',
      digits: 6,
      period: 30,
      secret: Secret.fromBase32(/<code data-secret>([A-Z2-7]+)<\/code>/.exec(again)![1]!),
    })
    const confirmed = await jar.fetch(
      `${service.url}/ui/account/totp/confirm`,
      form({ csrf: csrfOf(again), code: nextCode() }),
    )
    assert.equal(confirmed.status, 200)
    assert.match(await confirmed.text(), /Authenticator enabled/)

    // this session began with a password only: asked for a second factor, it must sign in again
    const stepUp = await browser(service, config, CALLBACK, { jar }).start({ acr_values: 'urn:svc:mfa' })
    const res = await jar.fetch(stepUp.url)
    assert.match(res.headers.get('location') ?? '', /^\/ui\/login\?/)
    const silent = await browser(service, config, CALLBACK, { jar }).start({
      acr_values: 'urn:svc:mfa',
      prompt: 'none',
    })
    const back = new URL((await jar.fetch(silent.url)).headers.get('location')!)
    assert.equal(back.searchParams.get('error'), 'login_required')
  })

  it('asks for a code after the password; a wrong or replayed code is refused', async () => {
    const jar = new CookieJar()
    const afterPassword = await passwordSignIn(jar)
    assert.equal(afterPassword.headers.get('location'), '/ui/mfa')
    assert.equal(jar.get('svc_session'), undefined, 'no session before the second factor')
    const page = await (await jar.fetch(`${service.url}/ui/mfa`)).text()
    assert.equal(
      (await jar.fetch(`${service.url}/ui/mfa`, form({ csrf: csrfOf(page), code: '123456' }))).status,
      401,
    )
    const code = nextCode()
    const done = await jar.fetch(`${service.url}/ui/mfa`, form({ csrf: csrfOf(page), code }))
    assert.equal(done.status, 303)
    assert.ok(jar.get('svc_session'))

    const replay = new CookieJar()
    await passwordSignIn(replay)
    const page2 = await (await replay.fetch(`${service.url}/ui/mfa`)).text()
    assert.equal(
      (await replay.fetch(`${service.url}/ui/mfa`, form({ csrf: csrfOf(page2), code }))).status,
      401,
      'a code is accepted once',
    )
  })

  it('issues acr urn:svc:mfa and amr [pwd, otp] through the code flow', async () => {
    const tokens = await browser(service, config, CALLBACK, { totp: nextCode }).signIn({
      acr_values: 'urn:svc:mfa',
    })
    const claims = tokens.claims()!
    assert.equal(claims.acr, 'urn:svc:mfa')
    assert.deepEqual(claims.amr, ['pwd', 'otp'])
  })

  it('answers unmet_authentication_requirements to acr_values=urn:svc:mfa for an account without a second factor', async () => {
    const jar = new CookieJar()
    const page = await (await jar.fetch(`${service.url}/ui/register`)).text()
    await jar.fetch(
      `${service.url}/ui/register`,
      form({ csrf: csrfOf(page), email: 'plain@example.com', password: 'a plain long password' }),
    )
    const user = browser(service, config, CALLBACK, {
      email: 'plain@example.com',
      password: 'a plain long password',
    })
    const flow = await user.start({ acr_values: 'urn:svc:mfa' })
    const back = new URL(await user.browse(flow.url))
    assert.equal(back.searchParams.get('error'), 'unmet_authentication_requirements')
  })
})
