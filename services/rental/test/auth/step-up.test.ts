import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { CookieJar } from '@svc/kit/testing'
import { b64uEncode } from '@svc/trust/base64url'
import { signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { Secret, TOTP } from 'otpauth'
import type { Browser, Page } from 'playwright-core'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { signInOnPage } from '@svc/testing/idp-flow'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()
const MAX_AGE_S = 300
const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code
const messageOf = (a: { body: Record<string, unknown> }) =>
  (a.body.error as { message?: string } | undefined)?.message

describe('rental: step-up (GET /api/auth/step-up) through the real idp; sensitive routes need a recent second factor', () => {
  let s: FullStack
  let browser: Browser | undefined
  let page: Page
  let offset = 0
  const password = (email: string) => `password-of-${email}`

  before(async () => {
    // the guard is on for this stack only (RENTAL_STEP_UP; off by default outside production)
    s = await startFullStack(
      {
        RENTAL_STEP_UP: 'true',
        RENTAL_STEP_UP_MAX_AGE_S: String(MAX_AGE_S),
        RENTAL_STEP_UP_RELEASE_FILS: '0',
      },
      { now: () => new Date(Date.now() + offset) },
    )
    if (!executable) return
    browser = await launchChromium(executable)
    page = await (await browser.newContext()).newPage()
    page.setDefaultTimeout(15_000)
  })
  after(async () => {
    await browser?.close()
    await s?.close()
  })

  /** Follows a step-up from the rental through the idp's pages (password only) to the rental's callback: its answer. */
  async function stepUpOverHttp(jar: CookieJar, start: string, email: string) {
    let location = start
    for (let hop = 0; hop < 10; hop++) {
      if (location.startsWith(`${s.rental.url}/auth/callback`)) return jar.fetch(location)
      const url = new URL(location, location.startsWith('/api/') ? s.rental.url : s.idp.url)
      const res = await jar.fetch(url.toString())
      if (res.status === 200 && url.pathname === '/ui/login') {
        location = await signInOnPage(s.idp, jar, await res.text(), { email, password: password(email) })
        continue
      }
      const next = res.headers.get('location')
      if (!next) throw new Error(`${location} answered ${res.status}: ${await res.text()}`)
      location = next
    }
    throw new Error('too many redirects')
  }

  it('refuses the sensitive routes 401 step_up_required, naming the step-up URL (message, WWW-Authenticate, Link); reads pass', async () => {
    const res = await s.call(
      s.alice,
      'POST',
      '/api/tokens',
      { label: 'needs mfa' },
      {
        headers: { referer: `${s.rental.url}/console?tab=tokens` },
      },
    )
    assert.equal(res.status, 401, res.text)
    assert.equal(codeOf(res), 'step_up_required')
    const url = '/api/auth/step-up?return_to=%2Fconsole%3Ftab%3Dtokens'
    assert.ok(messageOf(res)!.includes(url), messageOf(res))
    assert.match(res.headers.get('www-authenticate')!, /acr_values="urn:svc:mfa", max_age="300"/)
    assert.equal(res.headers.get('link'), `<${url}>; rel="step-up"`)
    const erase = await s.call(s.alice, 'POST', '/api/clients/erase', { confirm: s.alice.me.organization.id })
    assert.equal(erase.status, 401, erase.text)
    assert.equal(codeOf(erase), 'step_up_required')
    const hook = await s.call(s.alice, 'POST', '/api/webhooks', {
      url: 'https://127.0.0.1:9/x',
      event_types: ['webhook.test'],
    })
    assert.equal(codeOf(hook), 'step_up_required')
    // reads are not guarded, and the body is checked before the factor
    assert.equal((await s.call(s.alice, 'GET', '/api/tokens')).status, 200)
    assert.equal((await s.call(s.alice, 'POST', '/api/tokens', { label: 7 })).status, 400)
  })

  it('refuses a release above RENTAL_STEP_UP_RELEASE_FILS (0 here) until step-up; the escrow stays open', async () => {
    const key = s.newClientKey()
    const id = await s.hireAndSign(s.alice, 'job_summary', await s.agentOf('job_summary'), key)
    const task = await s.call(s.alice, 'POST', '/api/tasks', { engagement_id: id, text: 'One. Two.' })
    assert.equal(task.status, 200, task.text)
    const pending = await s.call(s.alice, 'GET', `/api/engagements/${id}/releases/pending`)
    const [r] = pending.body.releases as Array<{
      escrow: { hash: string; state: string }
      instruction: unknown
    }>
    const signature = b64uEncode(signEd25519(key.seed, canonicalBytes(r!.instruction)))
    const res = await s.call(s.alice, 'POST', `/api/engagements/${id}/releases`, {
      escrow_hash: r!.escrow.hash,
      instruction: { body: r!.instruction, signature },
    })
    assert.equal(res.status, 401, res.text)
    assert.equal(codeOf(res), 'step_up_required')
    const after = await s.call(s.alice, 'GET', `/api/engagements/${id}/releases/pending`)
    assert.equal((after.body.releases as unknown[]).length, 1, 'nothing was paid')
    // another organization's engagement is 404 as before, never a step-up
    const other = await s.call(s.bob, 'POST', `/api/engagements/${id}/releases`, {
      escrow_hash: r!.escrow.hash,
      instruction: { body: r!.instruction, signature },
    })
    assert.equal(other.status, 404, other.text)
  })

  it('starts a fresh code flow with PKCE asking for urn:svc:mfa and max_age=0; return_to must be a path of this site', async () => {
    const stranger = await fetch(`${s.rental.url}/api/auth/step-up`, { redirect: 'manual' })
    assert.equal(stranger.status, 401)
    for (const bad of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'console', '/a\nb']) {
      const res = await s.call(s.alice, 'GET', `/api/auth/step-up?${new URLSearchParams({ return_to: bad })}`)
      assert.equal(res.status, 400, `${bad}: ${res.text}`)
      assert.equal(codeOf(res), 'invalid_return_to')
    }
    const res = await s.alice.jar.fetch(`${s.rental.url}/api/auth/step-up?return_to=%2Fconsole`, {
      redirect: 'manual',
    })
    assert.equal(res.status, 302)
    const to = new URL(res.headers.get('location')!)
    assert.equal(to.origin, new URL(s.idp.url).origin)
    assert.equal(to.pathname, '/authorize')
    assert.equal(to.searchParams.get('acr_values'), 'urn:svc:mfa')
    assert.equal(to.searchParams.get('max_age'), '0')
    assert.equal(to.searchParams.get('code_challenge_method'), 'S256')
    assert.ok(
      to.searchParams.get('code_challenge') && to.searchParams.get('state') && to.searchParams.get('nonce'),
    )
    assert.match(res.headers.get('set-cookie') ?? '', /rental_login=/)
  })

  it('an account with no second factor gets the idp’s unmet_authentication_requirements, said plainly with where to set one up', async () => {
    const erin: Client = await s.signInWith('erin@step-up.example')
    const answer = await stepUpOverHttp(
      erin.jar,
      '/api/auth/step-up?return_to=%2Fconsole',
      'erin@step-up.example',
    )
    assert.equal(answer.status, 403)
    const body = (await answer.json()) as { error: { code: string; message: string } }
    assert.equal(body.error.code, 'second_factor_missing')
    assert.ok(body.error.message.includes(`${s.idp.url}/ui/account`), body.error.message)
    assert.match(body.error.message, /authenticator app \(TOTP\)/)
    // still refused
    const res = await s.call(erin, 'POST', '/api/tokens', { label: 'no' })
    assert.equal(codeOf(res), 'step_up_required')
  })

  it(
    'in Chromium: signed in with a password, refused; a TOTP set up at the idp; step-up with its code; allowed until the window passes',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const email = 'dana@step-up.example'
      const dana = await s.signInWith(email) // the idp account (and a console session over HTTP)
      await page.goto(`${s.rental.url}/console`)
      await page.waitForURL(/\/ui\/login/)
      await page.fill('#email', email)
      await page.fill('#password', password(email))
      await page.click('button[type=submit]')
      await page.waitForURL(`${s.rental.url}/console`)
      const api = page.context().request
      const csrf = ((await (await api.get(`${s.rental.url}/api/me`)).json()) as { csrf_token: string })
        .csrf_token
      const issue = () =>
        api.post(`${s.rental.url}/api/tokens`, {
          data: { label: 'after step-up' },
          headers: { 'x-csrf-token': csrf, referer: `${s.rental.url}/console` },
        })
      const refused = await issue()
      assert.equal(refused.status(), 401)
      const link = /^<([^>]+)>/.exec(refused.headers().link!)![1]!

      // an authenticator app at the idp's account page (away from a 30 s boundary: two codes follow)
      const left = 30_000 - (Date.now() % 30_000)
      if (left < 8_000) await new Promise((r) => setTimeout(r, left + 100))
      await page.goto(`${s.idp.url}/ui/account`)
      await page.click('form[action="/ui/account/totp"] button')
      const secret = (await page.textContent('[data-secret]'))!.trim()
      const totp = new TOTP({
        issuer: 'svc',
        algorithm: 'SHA1',
        digits: 6,
        period: 30,
        secret: Secret.fromBase32(secret),
      })
      const started = Date.now()
      await page.fill('#code', totp.generate({ timestamp: started }))
      await page.click('button[type=submit]')
      await page.getByText('Authenticator enabled').waitFor()

      // the step-up: the idp asks again for the password, then the code; back where the user was
      await page.goto(`${s.rental.url}${link}`)
      await page.waitForURL(/\/ui\/login/)
      await page.fill('#password', password(email))
      if (!(await page.inputValue('#email'))) await page.fill('#email', email)
      await page.click('button[type=submit]')
      await page.waitForURL(/\/ui\/mfa/)
      await page.fill('#code', totp.generate({ timestamp: started + 30_000 }))
      await page.click('button[type=submit]')
      await page.waitForURL(`${s.rental.url}/console`)

      const allowed = await issue()
      assert.equal(allowed.status(), 201, await allowed.text())
      const session = await s.db
        .selectFrom('console_sessions')
        .select(['acr', 'auth_time'])
        .where('subject', '=', dana.me.client.subject)
        .where('acr', '=', 'urn:svc:mfa')
        .executeTakeFirst()
      assert.ok(session?.auth_time, 'the session keeps acr and auth_time')
      // the other session of the same person (over HTTP, password only) is still refused
      assert.equal(codeOf(await s.call(dana, 'POST', '/api/tokens', { label: 'x' })), 'step_up_required')

      // past RENTAL_STEP_UP_MAX_AGE_S the second factor is old: refused again
      offset = (MAX_AGE_S + 5) * 1000
      try {
        const stale = await issue()
        assert.equal(stale.status(), 401)
        assert.equal(((await stale.json()) as { error: { code: string } }).error.code, 'step_up_required')
      } finally {
        offset = 0
      }
    },
  )
})
