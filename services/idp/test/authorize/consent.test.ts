import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://partner.example.com/callback'
const ALL = 'openid profile email offline_access'

describe('consent for third-party clients', () => {
  let service: RunningService<IdpConfig>
  let partner: oidc.Configuration
  let other: oidc.Configuration

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    ;({ config: partner } = await registerClient(service, {
      client_name: 'Partner',
      first_party: false,
      redirect_uris: [CALLBACK],
    }))
    ;({ config: other } = await registerClient(service, {
      client_name: 'Other',
      first_party: false,
      redirect_uris: [CALLBACK],
    }))
  })
  after(async () => service.close())

  it('asks scope by scope, and issues only what was granted, openid always', async () => {
    const user = browser(service, partner, CALLBACK, { consent: { decision: 'approve', scopes: ['email'] } })
    const tokens = await user.signIn({ scope: ALL })
    assert.equal(user.consents.length, 1)
    assert.match(user.consents[0]!, /<h1>Partner asks to<\/h1>/)
    assert.equal(tokens.scope, 'openid email')
    assert.equal(tokens.refresh_token, undefined, 'withholding offline_access means no refresh token')
    const sub = tokens.claims()!.sub
    assert.doesNotMatch(sub, /^usr_/, 'a third-party client sees a pairwise subject')
    assert.deepEqual(await oidc.fetchUserInfo(partner, tokens.access_token, sub), {
      sub,
      email: DEMO_EMAIL,
      email_verified: true,
    })
  })

  it('remembers the decision, and asks again on prompt=consent', async () => {
    const again = browser(service, partner, CALLBACK)
    const tokens = await again.signIn({ scope: ALL })
    assert.equal(again.consents.length, 0, 'every asked scope was decided before')
    assert.equal(tokens.scope, 'openid email')

    const renewed = browser(service, partner, CALLBACK, {
      consent: { decision: 'approve', scopes: ['profile', 'email', 'offline_access'] },
    })
    const all = await renewed.signIn({ scope: ALL, prompt: 'consent' })
    assert.equal(renewed.consents.length, 1)
    assert.equal(all.scope, ALL)
    assert.ok(all.refresh_token)
  })

  it('sends access_denied to the client when the user denies', async () => {
    const user = browser(service, other, CALLBACK, { consent: { decision: 'deny' } })
    const flow = await user.start({ scope: 'openid email' })
    const back = new URL(await user.browse(flow.url))
    assert.equal(back.searchParams.get('error'), 'access_denied')
    assert.equal(back.searchParams.get('state'), flow.state)
  })

  it('answers prompt=none with consent_required while a scope is undecided', async () => {
    const jar = new CookieJar()
    await browser(service, partner, CALLBACK, { jar }).signIn({ scope: 'openid email' })
    const flow = await browser(service, other, CALLBACK, { jar }).start({
      scope: 'openid profile',
      prompt: 'none',
    })
    const res = await jar.fetch(flow.url)
    assert.equal(new URL(res.headers.get('location')!).searchParams.get('error'), 'consent_required')
  })

  it('sends a post without a session to sign in, before looking at its body (issue 16, finding 6)', async () => {
    for (const body of ['{"csrf":"","decision":"approve"}', '{"a":']) {
      const res = await fetch(`${service.url}/ui/consent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        redirect: 'manual',
      })
      assert.equal(res.status, 303, body)
      assert.equal(res.headers.get('location'), `/ui/login?return_to=${encodeURIComponent('/ui/consent')}`)
    }
  })

  it('refuses a consent page for anything but a valid third-party request', async () => {
    const jar = new CookieJar()
    await browser(service, partner, CALLBACK, { jar }).signIn({ scope: 'openid email' })
    for (const returnTo of [
      '/ui/account',
      '/authorize?client_id=cli_nobody',
      `/authorize?client_id=x&redirect_uri=${encodeURIComponent(CALLBACK)}`,
    ]) {
      const res = await jar.fetch(`${service.url}/ui/consent?${new URLSearchParams({ return_to: returnTo })}`)
      assert.equal(res.status, 400, returnTo)
    }
  })
})
