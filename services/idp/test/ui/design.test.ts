import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import * as oidc from 'openid-client'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { idp } from '../../src/app.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { seriousAxeViolations } from '@svc/testing/axe'
import { ADMIN, registerClient } from '@svc/testing/idp-flow'

const executable = chromiumPath()
const PHONE = { width: 390, height: 844 }
const WIDE = { width: 1280, height: 900 }
const SECTIONS = ['profile', 'sign-in', 'sessions', 'apps', 'data', 'danger']

describe('the hosted pages share the console’s design', { skip: executable ? false : NO_CHROMIUM }, () => {
  let service: RunningService<IdpConfig>
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let partner: Awaited<ReturnType<typeof registerClient>>
  let consoleApp: Awaited<ReturnType<typeof registerClient>>
  // the application's own pages (its callback, its signed-out return): a page that only says it got there
  let app: Server
  let APP = ''
  let CALLBACK = ''
  let AFTER_LOGOUT = ''
  const shots = mkdtempSync(join(tmpdir(), 'idp-pages-'))
  const errors: string[] = []

  before(async () => {
    app = createServer((_, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>back</p>'))
    await new Promise<void>((resolve) => app.listen(0, 'localhost', resolve))
    APP = `http://localhost:${(app.address() as AddressInfo).port}`
    CALLBACK = `${APP}/callback`
    AFTER_LOGOUT = `${APP}/signed-out`
    service = await startService(
      idp,
      testEnv({
        HOST: 'localhost',
        IDP_ADMIN_TOKEN: ADMIN,
        IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
        IDP_TOKEN_RATE_PER_MIN_IP: '0',
        IDP_REGISTER_RATE_PER_MIN: '0',
        // each tour looks four device codes up
        IDP_USER_CODE_RATE_PER_MIN: '0',
      }),
      { fresh: true },
    )
    partner = await registerClient(service, {
      client_name: 'Partner',
      first_party: false,
      redirect_uris: [CALLBACK],
    })
    // as the rental registers its console: first-party, its page as client_uri
    consoleApp = await registerClient(service, {
      client_name: 'Rental console',
      redirect_uris: [CALLBACK],
      post_logout_redirect_uris: [AFTER_LOGOUT],
      client_uri: `${APP}/console`,
    })
    browser = await launchChromium(executable!)
    // a reader in Dubai: times must show in their zone, never as UTC; axe-core is injected inline (CSP bypassed)
    context = await browser.newContext({ viewport: WIDE, timezoneId: 'Asia/Dubai', bypassCSP: true })
    page = await context.newPage()
    page.setDefaultTimeout(10_000)
    page.on('pageerror', (e) => errors.push(e.message))
    page.on('response', (r) => {
      if (r.status() >= 400 && r.request().resourceType() !== 'document')
        errors.push(`${r.status()} ${r.url()}`)
    })
    process.stdout.write(`# screenshots of the idp's pages: ${shots}\n`)
  })
  after(async () => {
    await browser?.close()
    await service?.close()
    await new Promise((resolve) => app?.close(resolve))
  })

  /** Switches the pages' language through the switch's own route (a cookie), as a person would. */
  async function useLanguage(lang: 'en' | 'ar') {
    await page.goto(`${service.url}/ui/lang?lang=${lang}&return_to=/ui/login`)
  }

  /** The page's look: the shared sheet loaded and applied, laid out as a card under the product's bar. */
  async function checkDesign(name: string) {
    await page.waitForLoadState('load')
    // run in the page (the tests have no DOM types): strings, as the console's layout test does
    const look = (await page.evaluate(`({
      sheet: [...document.styleSheets].some((s) => (s.href ?? '').includes('/ui/design.css?v=')),
      accent: getComputedStyle(document.documentElement).getPropertyValue('--svc-accent').trim(),
      card: Boolean(document.querySelector('main.svc-main .svc-card')),
      brand: document.querySelector('.svc-brand')?.textContent?.trim(),
      icon: document.querySelector('link[rel="icon"]')?.getAttribute('href'),
    })`)) as { sheet: boolean; accent: string; card: boolean; brand?: string; icon?: string }
    assert.ok(look.sheet, `${name}: the shared style sheet`)
    assert.equal(look.accent, '#0b57d0', `${name}: the shared tokens apply`)
    assert.ok(look.card, `${name}: a card`)
    assert.equal(look.brand, 'svc', `${name}: the product's name`)
    assert.match(look.icon ?? '', /^\/favicon\.svg\?v=/)
  }

  /** axe-core's serious and critical violations on the page, each with up to three of its elements. */
  async function axe(name: string): Promise<string[]> {
    const found = await seriousAxeViolations(page)
    return found.map((v) => `${name}: ${v}`)
  }

  /**
   * The page leads back to the console: "Back to Rental console" when its flow was started by the
   * console's client, "Go to Rental console" (svc's console, a first-party client) otherwise.
   */
  async function linksToConsole(name: string, lang: 'en' | 'ar', sent: boolean) {
    const link = page.locator(`a[data-onward-app="${consoleApp.clientId}"]`)
    assert.equal(await link.count(), 1, `${lang} ${name}: one link to the console`)
    assert.equal(await link.getAttribute('href'), `${APP}/console`, `${lang} ${name}: its client_uri`)
    const words = {
      en: sent ? 'Back to Rental console' : 'Go to Rental console',
      ar: sent ? 'العودة إلى Rental console' : 'الانتقال إلى Rental console',
    }
    assert.equal((await link.textContent())?.trim(), words[lang], `${lang} ${name}`)
    assert.ok(await link.isVisible(), `${lang} ${name}: visible`)
  }

  /** An authorization request of the console's client, as the rental starts one. */
  async function consoleAuthorization() {
    return oidc
      .buildAuthorizationUrl(consoleApp.config, {
        redirect_uri: CALLBACK,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        state: oidc.randomState(),
      })
      .toString()
  }

  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })

  /** Each page a person meets, reached as they would reach it; `check` runs on each. */
  async function tour(lang: 'en' | 'ar', check: (name: string) => Promise<void>) {
    await context.clearCookies()
    await useLanguage(lang)
    // a flow the console started: sign-in, registration and "check your email" lead back to it
    await page.goto(await consoleAuthorization())
    await page.waitForURL(/\/ui\/login\?/)
    await check('sign-in')
    await linksToConsole('sign-in', lang, true)
    await page.locator('a[data-link="register"]').click()
    await page.waitForURL(/\/ui\/register\?/)
    await check('register')
    await linksToConsole('register', lang, true)
    await page.locator('#email').fill(`new-${lang}@example.com`)
    await page.locator('#password').fill('short')
    // the browser checks the length first; past it (an old browser), the server says it under the field
    await page.locator('#password').evaluate((input) => input.removeAttribute('minlength'))
    await page.locator('form[action="/ui/register"] button[type="submit"]').click()
    await page.locator('#password-error').waitFor()
    await check('register-error')
    await page.locator('#password').fill('a long enough password')
    await page.locator('form[action="/ui/register"] button[type="submit"]').click()
    await page.locator('[data-resend]').waitFor()
    await check('check-your-email')
    await linksToConsole('check-your-email', lang, true)
    // no flow: the pages lead to svc's console
    await page.goto(`${service.url}/ui/forgot`)
    await check('forgot')
    await linksToConsole('forgot', lang, false)
    await page.goto(`${service.url}/ui/login`)
    await page.locator('#email').fill(DEMO_EMAIL)
    await page.locator('#password').fill(service.ctx.config.demoPassword)
    await page.locator('form[action="/ui/login"] button[type="submit"]').click()
    await page.waitForURL(/\/ui\/account/)
    await check('account')
    // a third party's consent page
    const url = oidc.buildAuthorizationUrl(partner.config, {
      redirect_uri: CALLBACK,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    })
    await page.goto(url.toString())
    await page.locator('form[action="/ui/consent"]').waitFor()
    await check('consent')
    // a device: the code entry, then its approval
    await page.goto(`${service.url}/device`)
    await check('device-code')
    const started = await oidc.initiateDeviceAuthorization(consoleApp.config, { scope: 'openid' })
    await page.locator('#user_code').fill(started.user_code)
    await page.locator('form[action="/device"] button[type="submit"]').click()
    await page.locator('button[value="approve"]').waitFor()
    await check('device-approve')
    await page.locator('button[value="approve"]').click()
    await page.locator('[data-onward]').waitFor()
    await check('device-connected')
    await linksToConsole('device-connected', lang, true)
    // a device refused: still back to its application
    const refused = await oidc.initiateDeviceAuthorization(consoleApp.config, { scope: 'openid' })
    await page.goto(`${service.url}/device?user_code=${refused.user_code}`)
    await page.locator('button[value="deny"]').click()
    await page.locator('[data-onward]').waitFor()
    await check('device-refused')
    await linksToConsole('device-refused', lang, true)
    // signed out with no application to return to: the page stays, and leads to sign in again or the console
    await page.goto(`${service.url}/logout`)
    await check('signed-out')
    await linksToConsole('signed-out', lang, false)
    // signed out by the console without a return address: back to it, no redirect
    await page.goto(`${service.url}/logout?client_id=${consoleApp.clientId}&ui_locales=${lang}`)
    await check('signed-out-by-app')
    await linksToConsole('signed-out-by-app', lang, true)
  }

  it('every page: the shared style sheet, a card, the product name; axe-core finds nothing serious, in English and Arabic, wide and on a phone', async () => {
    const found: string[] = []
    for (const viewport of [WIDE, PHONE])
      for (const lang of ['en', 'ar'] as const) {
        await page.setViewportSize(viewport)
        await tour(lang, async (name) => {
          const label = `${viewport.width} ${lang} ${name}`
          await checkDesign(label)
          if (viewport === PHONE) {
            const fit = (await page.evaluate(`({
              overflow: document.documentElement.scrollWidth - window.innerWidth,
              bar: document.querySelector('.svc-top').getBoundingClientRect().height,
            })`)) as { overflow: number; bar: number }
            assert.ok(fit.overflow <= 0, `${label}: nothing wider than the phone (${fit.overflow} px over)`)
            assert.ok(fit.bar <= 64, `${label}: the bar is one row (${fit.bar} px)`)
          }
          await shot(`${viewport.width}-${lang}-${name}`)
          found.push(...(await axe(label)))
        })
      }
    await page.setViewportSize(WIDE)
    assert.deepEqual(found, [])
    assert.deepEqual(
      errors.filter((e) => !e.includes(APP)),
      [],
    )
  })

  it('the account page: ordered by what people do, deletion last in a danger zone, times in the reader’s zone, no jargon', async () => {
    await context.clearCookies()
    await useLanguage('en')
    await page.goto(`${service.url}/ui/login?return_to=/ui/account`)
    await page.locator('#email').fill(DEMO_EMAIL)
    await page.locator('#password').fill(service.ctx.config.demoPassword)
    await page.locator('form[action="/ui/login"] button[type="submit"]').click()
    await page.waitForURL(/\/ui\/account/)
    const order = await page
      .locator('main [data-section]')
      .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-section')))
    assert.deepEqual(order, SECTIONS)
    assert.equal(await page.locator('[data-section="danger"].svc-danger #confirm').count(), 1)
    const headings = await page.locator('main h2').allTextContents()
    assert.deepEqual(headings, [
      'Profile',
      'How you sign in',
      'Sessions and devices',
      'Apps',
      'Your data',
      'Danger zone',
    ])
    // passkeys and two-step sign-in come before the deletion
    const before = (await page.evaluate(`(() => {
      const danger = document.querySelector('[data-section="danger"]')
      return ['[action="/ui/account/passkeys"]', '[action="/ui/account/totp"]', '[action="/ui/account/key-backup"]'].map(
        (selector) => (document.querySelector(selector).compareDocumentPosition(danger) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0,
      )
    })()`)) as boolean[]
    assert.deepEqual(before, [true, true, true])
    const text = await page.locator('main').innerText()
    assert.doesNotMatch(text, /PBES2|A256GCM|JWE|JWK/)
    const times = await page
      .locator('time[data-when]')
      .evaluateAll((nodes) =>
        nodes.map((n) => ({ text: n.textContent ?? '', iso: n.getAttribute('datetime') ?? '' })),
      )
    assert.ok(times.length > 0, 'the sessions and events show times')
    for (const time of times) {
      assert.match(time.iso, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      assert.doesNotMatch(time.text, /UTC|\d{4}-\d{2}-\d{2}T/, `shown in the reader's zone: ${time.text}`)
      assert.match(time.text, /GMT\+4|GST/, `Dubai's time: ${time.text}`)
    }
  })

  it('every end page leads on: check your email resends and goes back; a changed password signs in; the outbox links are links', async () => {
    await context.clearCookies()
    await useLanguage('en')
    // a person who forgot their password while the console sent them to sign in
    await page.goto(await consoleAuthorization())
    await page.locator('a[data-link="forgot"]').click()
    await page.waitForURL(/\/ui\/forgot\?/)
    await linksToConsole('forgot (flow)', 'en', true)
    await page.locator('#email').fill(DEMO_EMAIL)
    await page.locator('form[action="/ui/forgot"] button[type="submit"]').click()
    await page.getByRole('heading', { name: 'Check your email' }).waitFor()
    assert.equal(await page.locator('[data-onward-link][href^="/ui/login"]').count(), 1, 'back to sign in')
    await linksToConsole('check-your-email (reset)', 'en', true)
    await page.getByRole('button', { name: 'Send it again' }).click()
    await page.getByRole('heading', { name: 'Check your email' }).waitFor()

    await page.goto(`${service.url}/ui/dev/outbox`)
    const reset = page.locator('pre a[href*="/ui/reset?token="]').first()
    assert.equal(
      await page.locator('pre a[href*="/ui/reset?token="]').count(),
      2,
      'both messages, each a link',
    )
    assert.equal(
      await page
        .locator(`pre a[href*="/ui/reset?token="][href$="&client_id=${consoleApp.clientId}"]`)
        .count(),
      2,
      'each link names the application, for the pages after it',
    )
    await checkDesign('outbox')
    await reset.click()
    await page.locator('#password').fill('a brand new password')
    await page.locator('form[action="/ui/reset"] button[type="submit"]').click()
    await page.getByRole('heading', { name: 'Password changed' }).waitFor()
    await linksToConsole('password-changed', 'en', true)
    const signIn = page.locator('[data-onward-link]')
    assert.match((await signIn.first().getAttribute('href')) ?? '', /^\/ui\/login/)
    await signIn.first().click()
    await page.locator('form[action="/ui/login"]').waitFor()
    await page.locator('#email').fill(DEMO_EMAIL)
    await page.locator('#password').fill('a brand new password')
    await page.locator('form[action="/ui/login"] button[type="submit"]').click()
    await page.waitForURL(/\/ui\/account/)
    // the account leads on to svc's own apps once the person used one: the console
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    await page.goto(
      oidc
        .buildAuthorizationUrl(consoleApp.config, {
          redirect_uri: CALLBACK,
          scope: 'openid',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
        })
        .toString(),
    )
    await page.waitForURL((u) => u.toString().startsWith(CALLBACK))
    await oidc.authorizationCodeGrant(consoleApp.config, new URL(page.url()), {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    await page.goto(`${service.url}/ui/account`)
    assert.equal(await page.locator(`a[data-open-app][href="${APP}"]`).count(), 1)

    // signed out by the application: back to it, or sign in again. The page moves on to the
    // application by itself once its frames load, so its links are read from the page as served.
    const signedOut = await page.goto(
      `${service.url}/logout?${new URLSearchParams({ client_id: consoleApp.clientId, post_logout_redirect_uri: AFTER_LOGOUT })}`,
    )
    const served = await signedOut!.text()
    const onward = [
      ...served.matchAll(
        /<a\s+href="([^"]*)"[^>]*?data-onward-link(?:\s+data-onward-app="([^"]*)")?\s*>([^<]*)<\/a/g,
      ),
    ].map(([, href, app, text]) => ({ href, app, text: text!.trim() }))
    assert.deepEqual(
      onward.map((link) => link.href),
      [AFTER_LOGOUT, '/ui/login?ui_locales=en'],
    )
    assert.deepEqual(
      onward.filter((link) => link.app === consoleApp.clientId).map((link) => link.text),
      ['Back to Rental console'],
    )
    await page.waitForURL(AFTER_LOGOUT)
  })

  it('serves the style sheet and the favicon with caching: immutable when versioned, revalidated by ETag otherwise', async () => {
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      const res = await fetch(`${service.url}${path}`)
      assert.equal(res.status, 200, path)
      assert.equal(res.headers.get('content-type'), 'image/svg+xml')
      assert.match(await res.text(), /^<svg /)
    }
    const login = await (await fetch(`${service.url}/ui/login`)).text()
    const href = /href="(\/ui\/design\.css\?v=[^"]+)"/.exec(login)![1]!
    const versioned = await fetch(`${service.url}${href}`)
    assert.equal(versioned.status, 200)
    assert.equal(versioned.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    assert.match(await versioned.text(), /--svc-focus:/)
    const plain = await fetch(`${service.url}/ui/design.css`)
    assert.equal(plain.headers.get('cache-control'), 'public, max-age=0, must-revalidate')
    const again = await fetch(`${service.url}/ui/design.css`, {
      headers: { 'if-none-match': plain.headers.get('etag')! },
    })
    assert.equal(again.status, 304)
  })
})
