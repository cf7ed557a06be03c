import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import type { Kysely } from 'kysely'
import { idp } from '../../src/app.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import { csrfOf } from '@svc/testing/idp-flow'
import type { IdpTables } from '../../src/db.ts'

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})

describe('idp sign-in pages', () => {
  let service: RunningService<IdpConfig>
  let password: string
  before(async () => {
    service = await startService(idp, testEnv(), { fresh: true })
    password = service.ctx.config.demoPassword
  })
  after(async () => service.close())

  async function signIn(
    jar: CookieJar,
    fields: Partial<Record<'email' | 'password' | 'return_to', string>> = {},
  ) {
    const page = await (await jar.fetch(`${service.url}/ui/login`)).text()
    return jar.fetch(
      `${service.url}/ui/login`,
      form({ email: DEMO_EMAIL, password, csrf: csrfOf(page), ...fields }),
    )
  }

  it('signs the demo user in with a session cookie, and shows the account with its activity', async () => {
    const jar = new CookieJar()
    const res = await signIn(jar)
    assert.equal(res.status, 303)
    assert.equal(res.headers.get('location'), '/ui/account')
    assert.ok(jar.get('svc_session'))
    const attributes = jar.attributes.get('svc_session') ?? ''
    assert.match(attributes, /HttpOnly/i)
    assert.match(attributes, /SameSite=Lax/i)
    const account = await jar.fetch(`${service.url}/ui/account`, {
      headers: { 'user-agent': 'test-browser/1.0' },
    })
    assert.equal(account.status, 200)
    const text = await account.text()
    assert.match(text, new RegExp(`Signed in as <strong>${DEMO_EMAIL}</strong>`))
    assert.match(text, /<td data-event="login">Signed in<\/td>/)
  })

  it('keeps the password as argon2id', async () => {
    const db = service.ctx.database!.db as Kysely<IdpTables>
    const user = await db
      .selectFrom('users')
      .select('password_hash')
      .where('email', '=', DEMO_EMAIL)
      .executeTakeFirstOrThrow()
    assert.match(user.password_hash!, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
  })

  it('answers a wrong password and an unknown email alike, without a session', async () => {
    const wrong = await signIn(new CookieJar(), { password: 'not-the-password' })
    const unknown = await signIn(new CookieJar(), { email: 'nobody@example.com' })
    for (const res of [wrong, unknown]) {
      assert.equal(res.status, 401)
      assert.match(await res.text(), /Wrong email or password\./)
      assert.equal(
        res.headers.getSetCookie().some((c) => c.startsWith('svc_session=')),
        false,
      )
    }
  })

  it('refuses a form without its CSRF token, or posted from another origin', async () => {
    const jar = new CookieJar()
    await jar.fetch(`${service.url}/ui/login`)
    const noToken = await jar.fetch(
      `${service.url}/ui/login`,
      form({ email: DEMO_EMAIL, password, csrf: 'forged' }),
    )
    assert.equal(noToken.status, 403)
    const page = await (await jar.fetch(`${service.url}/ui/login`)).text()
    const crossSite = await jar.fetch(`${service.url}/ui/login`, {
      ...form({ email: DEMO_EMAIL, password, csrf: csrfOf(page) }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
    })
    assert.equal(crossSite.status, 403)
    assert.equal(jar.get('svc_session'), undefined)
  })

  it('returns only to paths on this site, and escapes what it echoes', async () => {
    const away = await signIn(new CookieJar(), { return_to: '//evil.example/steal' })
    assert.equal(away.headers.get('location'), '/ui/account')
    const inside = await signIn(new CookieJar(), { return_to: '/authorize?client_id=x' })
    assert.equal(inside.headers.get('location'), '/authorize?client_id=x')
    const page = await (
      await fetch(`${service.url}/ui/login?return_to=${encodeURIComponent('/"><script>alert(1)</script>')}`)
    ).text()
    assert.doesNotMatch(page, /<script>alert/)
    assert.match(page, /&quot;&gt;&lt;script&gt;/)
  })

  it('signs out: the session ends and the account page asks to sign in again', async () => {
    const jar = new CookieJar()
    await signIn(jar)
    const account = await (await jar.fetch(`${service.url}/ui/account`)).text()
    const out = await jar.fetch(`${service.url}/ui/logout`, form({ csrf: csrfOf(account) }))
    assert.equal(out.status, 303)
    const again = await jar.fetch(`${service.url}/ui/account`)
    assert.equal(again.status, 303)
    assert.match(again.headers.get('location') ?? '', /^\/ui\/login\?return_to=/)
  })

  it('slows down password guessing: ten attempts a minute per address and account', async () => {
    const jar = new CookieJar()
    const page = await (await jar.fetch(`${service.url}/ui/login`)).text()
    // a fixed window may reset between two attempts: the limit holds within twice its size, whatever the clock
    const statuses: number[] = []
    while (statuses.length < 21 && !statuses.includes(429))
      statuses.push(
        (
          await jar.fetch(
            `${service.url}/ui/login`,
            form({ email: 'target@example.com', password: `guess${statuses.length}`, csrf: csrfOf(page) }),
          )
        ).status,
      )
    const refused = statuses.indexOf(429)
    assert.ok(refused >= 10, `at least ten attempts were allowed (${statuses.join(',')})`)
    assert.deepEqual(new Set(statuses.slice(0, refused)), new Set([401]))
  })

  it('exports the signed-in account as JSON, without secrets, and only with the CSRF token', async () => {
    const jar = new CookieJar()
    await signIn(jar)
    const account = await (await jar.fetch(`${service.url}/ui/account`)).text()
    const res = await jar.fetch(`${service.url}/ui/account/export`, form({ csrf: csrfOf(account) }))
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename="svc-account\.json"/)
    const text = await res.text()
    const data = JSON.parse(text) as {
      format: string
      account: { email: string }
      security_events: Array<{ type: string }>
      sessions: unknown[]
    }
    assert.equal(data.format, 'svc-account-export/v1')
    assert.equal(data.account.email, DEMO_EMAIL)
    assert.ok(data.security_events.some((e) => e.type === 'login'))
    assert.ok(data.sessions.length >= 1)
    assert.doesNotMatch(text, /argon2|password_hash|id_hash/, 'no secret in the export')
    assert.equal((await jar.fetch(`${service.url}/ui/account/export`, form({ csrf: 'forged' }))).status, 403)
    const anonymous = new CookieJar()
    const page = await (await anonymous.fetch(`${service.url}/ui/login`)).text()
    assert.equal(
      (await anonymous.fetch(`${service.url}/ui/account/export`, form({ csrf: csrfOf(page) }))).status,
      401,
    )
    // no session comes before a malformed body (issue 16, finding 6)
    for (const body of ['{}', '{"a":'])
      assert.equal(
        (
          await fetch(`${service.url}/ui/account/export`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          })
        ).status,
        401,
        body,
      )
  })
})
