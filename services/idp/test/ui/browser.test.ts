import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import * as oidc from 'openid-client'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { idp } from '../../src/app.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { ADMIN, registerClient } from '@svc/testing/idp-flow'

const executable = chromiumPath()

// WebAuthn needs a secure context and a domain as relying party id: http://localhost is both, 127.0.0.1 is not
describe('the hosted pages in headless Chromium', { skip: executable ? false : NO_CHROMIUM }, () => {
  let service: RunningService<IdpConfig>
  let app: Server
  let callback: string
  let browser: Browser
  let context: BrowserContext
  let page: Page

  before(async () => {
    // the client's redirect URI: a page that only says it got the answer
    app = createServer((_, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>back</p>'))
    await new Promise<void>((resolve) => app.listen(0, 'localhost', resolve))
    callback = `http://localhost:${(app.address() as AddressInfo).port}/callback`
    service = await startService(
      idp,
      testEnv({
        HOST: 'localhost',
        IDP_ADMIN_TOKEN: ADMIN,
        IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
        IDP_TOKEN_RATE_PER_MIN_IP: '0',
      }),
      { fresh: true },
    )
    browser = await launchChromium(executable!)
    context = await browser.newContext()
    page = await context.newPage()
  })
  after(async () => {
    await browser?.close()
    await service?.close()
    await new Promise((resolve) => app?.close(resolve))
  })

  /** openid-client builds the request; Chromium does what a person would; openid-client checks the answer. */
  async function authorize(
    config: oidc.Configuration,
    act: () => Promise<void>,
    extra: Record<string, string> = {},
  ) {
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    const nonce = oidc.randomNonce()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callback,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    })
    await page.goto(url.toString())
    await act()
    await page.waitForURL((u) => u.toString().startsWith(callback))
    return oidc.authorizationCodeGrant(config, new URL(page.url()), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    })
  }

  it('signs in and consents through the real pages for a third-party client', async () => {
    const { config } = await registerClient(service, {
      client_name: 'Partner',
      first_party: false,
      redirect_uris: [callback],
    })
    const tokens = await authorize(config, async () => {
      await page.getByLabel('Email').fill(DEMO_EMAIL)
      await page.getByLabel('Password').fill(service.ctx.config.demoPassword)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.getByRole('heading', { name: 'Partner asks to' }).waitFor()
      await page.getByRole('button', { name: 'Allow' }).click()
    })
    assert.equal(tokens.scope, 'openid email')
    assert.deepEqual(tokens.claims()!.amr, ['pwd'])
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub)
    assert.equal(info.email, DEMO_EMAIL)
  })

  it('adds a passkey, signs in with it alone, and only then may remove the password', async () => {
    // a platform authenticator that verifies its user, as a phone or a laptop with a fingerprint reader does
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    })

    await page.goto(`${service.url}/ui/account`)
    assert.equal(
      await page.getByRole('button', { name: /Remove my password/ }).count(),
      0,
      'a password session is not offered password removal',
    )
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.locator('form[action="/ui/account/passkeys/delete"]').waitFor()

    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.waitForURL(/\/ui\/login/)
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    await page.waitForURL(/\/ui\/account/)
    await page.getByText(`Signed in as ${DEMO_EMAIL}`).waitFor()

    // a passkey session already proves a second factor: acr_values=urn:svc:mfa comes straight back
    const { config } = await registerClient(service, { redirect_uris: [callback] })
    const tokens = await authorize(config, async () => {}, { acr_values: 'urn:svc:mfa' })
    assert.equal(tokens.claims()!.acr, 'urn:svc:mfa')
    assert.deepEqual(tokens.claims()!.amr, ['webauthn'])

    await page.goto(`${service.url}/ui/account`)
    await page.getByRole('button', { name: /Remove my password/ }).click()
    await page.waitForURL(/\/ui\/account/)
    const activity = await page.getByRole('table', { name: 'Recent security activity' }).innerText()
    assert.match(activity, /Password removed/)
    assert.match(activity, /Passkey added/)

    // the password no longer signs in
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.getByLabel('Email').fill(DEMO_EMAIL)
    await page.getByLabel('Password').fill(service.ctx.config.demoPassword)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByText('Wrong email or password.').waitFor()
  })

  it('switches the pages to Arabic, right to left, and remembers it', async () => {
    await page.goto(`${service.url}/ui/login`)
    await page.getByRole('link', { name: 'العربية' }).click()
    await page.waitForURL(/\/ui\/login$/)
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl')
    assert.equal(await page.locator('html').getAttribute('lang'), 'ar')
    await page.getByRole('heading', { name: 'تسجيل الدخول' }).waitFor()
    await page.getByRole('link', { name: 'إنشاء حساب' }).click()
    await page.waitForURL(/\/ui\/register/)
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl')
    await page.getByRole('link', { name: 'English' }).click()
    await page.getByRole('heading', { name: 'Create an account' }).waitFor()
    assert.equal(await page.locator('html').getAttribute('dir'), 'ltr')
  })
})
