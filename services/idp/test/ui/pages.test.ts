import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, request, testEnv } from '@svc/kit/testing'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, csrfOf, registerClient } from '@svc/testing/idp-flow'
import { startReceiver } from '../support/receiver.ts'

const CALLBACK = 'http://127.0.0.1:9/callback'
const AFTER_LOGOUT = 'http://127.0.0.1:9/signed-out'
const CHROME_LINUX =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0'
const RTL = /<html lang="ar" dir="rtl">/
const LTR = /<html lang="en" dir="ltr">/

const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  body: new URLSearchParams(fields).toString(),
})

describe('idp hosted pages: languages, links, the account page, the root', () => {
  let service: RunningService<IdpConfig>
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let firstParty: oidc.Configuration
  let partner: oidc.Configuration
  const page = async (path: string, headers: Record<string, string> = {}, jar = new CookieJar()) => {
    const res = await jar.fetch(`${service.url}${path}`, { headers })
    return { status: res.status, text: await res.text(), res }
  }
  /** Signs the demo account in from a browser that names itself `userAgent`. */
  async function signIn(jar: CookieJar, userAgent: string) {
    const login = await page('/ui/login', {}, jar)
    const res = await jar.fetch(
      `${service.url}/ui/login`,
      form(
        { email: DEMO_EMAIL, password: service.ctx.config.demoPassword, csrf: csrfOf(login.text) },
        { 'user-agent': userAgent },
      ),
    )
    assert.equal(res.status, 303)
    return jar
  }

  before(async () => {
    receiver = await startReceiver(200)
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    ;({ config: firstParty } = await registerClient(service, {
      client_name: 'Rental console',
      redirect_uris: [CALLBACK],
      post_logout_redirect_uris: [AFTER_LOGOUT],
      backchannel_logout_uri: receiver.url,
    }))
    ;({ config: partner } = await registerClient(service, {
      client_name: 'Partner',
      first_party: false,
      redirect_uris: [CALLBACK],
    }))
  })
  after(async () => {
    await service.close()
    await receiver.close()
  })

  it('the sign-in page links to registration and password reset, and both pages work', async () => {
    const login = await page('/ui/login')
    assert.match(login.text, LTR)
    const links = [...login.text.matchAll(/href="([^"]+)" data-link="(forgot|register)"/g)]
    assert.deepEqual(links.map((m) => m[2]).sort(), ['forgot', 'register'])
    for (const [, href] of links) {
      const target = await page(href!.replaceAll('&amp;', '&'))
      assert.equal(target.status, 200)
      assert.match(target.text, /<form method="post" action="\/ui\/(register|forgot)">/)
    }
    const reset = await page('/ui/reset?token=abc')
    assert.match(reset.text, /<form method="post" action="\/ui\/reset">/)
  })

  it('follows Accept-Language: Arabic right to left, English otherwise', async () => {
    const arabic = await page('/ui/login', { 'accept-language': 'fr;q=1, ar-AE;q=0.9, en;q=0.5' })
    assert.match(arabic.text, RTL)
    assert.match(arabic.text, /<h1>تسجيل الدخول<\/h1>/)
    assert.match(arabic.text, /نسيت كلمة المرور؟/)
    assert.match(arabic.text, /href="\/ui\/lang\?lang=en&amp;return_to=%2Fui%2Flogin" lang="en"/)
    for (const path of ['/ui/register', '/ui/forgot', '/ui/reset?token=abc'])
      assert.match((await page(path, { 'accept-language': 'ar' })).text, RTL, path)
    assert.match((await page('/ui/login', { 'accept-language': 'de, en;q=0.1, ar;q=0' })).text, LTR)
  })

  it('follows ui_locales through /authorize to the sign-in and consent pages (first supported wins)', async () => {
    const user = browser(service, partner, CALLBACK, { consent: { decision: 'approve' } })
    const flow = await user.start({ ui_locales: 'fr-CA ar en' })
    const toLogin = await user.jar.fetch(flow.url, { headers: { 'accept-language': 'en' } })
    const login = await user.jar.fetch(new URL(toLogin.headers.get('location')!, service.url).toString())
    const loginPage = await login.text()
    assert.match(loginPage, RTL)
    // the form's answer stays Arabic (a wrong password here)
    const wrong = await user.jar.fetch(
      `${service.url}/ui/login`,
      form({
        email: DEMO_EMAIL,
        password: 'not the password',
        csrf: csrfOf(loginPage),
        return_to: /name="return_to" value="([^"]+)"/.exec(loginPage)![1]!.replaceAll('&amp;', '&'),
      }),
    )
    assert.equal(wrong.status, 401)
    assert.match(await wrong.text(), /البريد الإلكتروني أو كلمة المرور غير صحيحة/)
    await user.browse(flow.url)
    assert.match(user.consents[0]!, RTL)
    assert.match(user.consents[0]!, /<h1>يطلب Partner أن<\/h1>/)
    assert.match(user.consents[0]!, /رؤية عنوان بريدك الإلكتروني/)
  })

  it('remembers the switch in a cookie, which outranks ui_locales and Accept-Language', async () => {
    const jar = new CookieJar()
    const switched = await jar.fetch(
      `${service.url}/ui/lang?lang=ar&return_to=${encodeURIComponent('/ui/forgot')}`,
    )
    assert.equal(switched.status, 303)
    assert.equal(switched.headers.get('location'), '/ui/forgot')
    assert.equal(jar.get('svc_lang'), 'ar')
    assert.match(jar.attributes.get('svc_lang')!, /Max-Age=31536000/i)
    assert.match((await page('/ui/forgot?ui_locales=en', { 'accept-language': 'en' }, jar)).text, RTL)
    // never elsewhere than this site
    const away = await jar.fetch(
      `${service.url}/ui/lang?lang=en&return_to=${encodeURIComponent('//evil.example')}`,
    )
    assert.equal(away.headers.get('location'), '/ui/login')
    assert.match((await page('/ui/forgot', { 'accept-language': 'ar' }, jar)).text, LTR)
    assert.equal((await page('/ui/lang?lang=fr')).status, 400)
  })

  it('the device and sign-out pages follow the language too', async () => {
    const jar = await signIn(new CookieJar(), CHROME_LINUX)
    const device = await page('/device', { 'accept-language': 'ar' }, jar)
    assert.match(device.text, RTL)
    assert.match(device.text, /ربط جهاز/)
    const loggedOut = await page(
      `/logout?${new URLSearchParams({ client_id: 'nobody', post_logout_redirect_uri: AFTER_LOGOUT, ui_locales: 'ar' })}`,
      {},
      jar,
    )
    assert.equal(loggedOut.status, 400)
    assert.match(loggedOut.text, RTL)
    assert.match(loggedOut.text, /تعذّر تسجيل الخروج/)
  })

  it('the account page names devices and dates readably, lists svc apps, and signs out other sessions', async () => {
    // one browser signs in to the first-party app; another signs in on its own
    const other = browser(service, firstParty, CALLBACK, {
      jar: await signIn(new CookieJar(), FIREFOX_WINDOWS),
    })
    const tokens = await other.signIn()
    const here = await signIn(new CookieJar(), CHROME_LINUX)
    const account = await page('/ui/account', {}, here)
    assert.match(account.text, /Chrome on Linux/)
    assert.match(account.text, /Firefox on Windows/)
    assert.match(account.text, /\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC/)
    assert.match(account.text, /(now|minute ago|minutes ago)/)
    assert.ok(!/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(account.text.replace(/datetime="[^"]+"/g, '')))
    assert.match(account.text, /<td data-event="login">Signed in<\/td>/)
    assert.match(
      account.text,
      /data-first-party="[^"]+">\s*<a href="http:\/\/127\.0\.0\.1:9">Rental console<\/a>/,
    )
    assert.match(account.text, /<tr data-session="current">/)
    const arabic = await page('/ui/account', { 'accept-language': 'ar' }, here)
    assert.match(arabic.text, RTL)
    assert.match(arabic.text, /Chrome على Linux/)
    assert.match(arabic.text, /تسجيل الخروج من الجلسات الأخرى/)

    // without the CSRF token, nothing ends
    const forged = await here.fetch(`${service.url}/ui/account/sessions/end-others`, form({ csrf: 'forged' }))
    assert.equal(forged.status, 403)
    assert.equal((await page('/ui/account', {}, other.jar)).status, 200)
    const ended = await here.fetch(
      `${service.url}/ui/account/sessions/end-others`,
      form({ csrf: csrfOf(account.text) }),
    )
    assert.equal(ended.status, 303)
    assert.equal((await page('/ui/account', {}, other.jar)).status, 303, 'the other browser is signed out')
    const after = await page('/ui/account', {}, here)
    assert.equal(after.status, 200, 'this browser stays signed in')
    assert.match(after.text, /You are signed in nowhere else\./)
    assert.match(after.text, /<td data-event="other_sessions_ended">Other sessions signed out<\/td>/)
    // the app signed in from the other browser is told, as at any sign-out (back-channel logout)
    const [delivery] = await receiver.arrived(1)
    const logoutToken = new URLSearchParams(delivery!.body).get('logout_token')!
    const claims = JSON.parse(Buffer.from(logoutToken.split('.')[1]!, 'base64url').toString()) as {
      sid: string
    }
    assert.equal(claims.sid, tokens.claims()!.sid)
    assert.equal(
      (await request(`${service.url}/ui/account/sessions/end-others`, form({ csrf: 'x' }))).status,
      401,
    )
  })

  it('advertises its languages, and its root says what it is (a page, or JSON)', async () => {
    const discovery = await request(`${service.url}/.well-known/openid-configuration`)
    assert.deepEqual(discovery.body.ui_locales_supported, ['en', 'ar'])
    const root = await page('/', { accept: 'text/html,*/*;q=0.8' })
    assert.equal(root.status, 200)
    assert.match(root.text, /<h1>svc idp<\/h1>/)
    for (const href of ['/docs', '/.well-known/openid-configuration', '/ui/login'])
      assert.ok(root.text.includes(`href="${href}"`), href)
    const json = await request(`${service.url}/`, { headers: { accept: 'application/json' } })
    assert.equal(json.body.service, 'idp')
    const links = json.body.links as Record<string, string>
    assert.equal(links.discovery, `${service.ctx.baseUrl}/.well-known/openid-configuration`)
    assert.match(links.console!, /\/console$/)
  })
})
