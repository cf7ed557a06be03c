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

describe('registration and email verification', () => {
  let service: RunningService<IdpConfig>
  let db: Kysely<IdpTables>
  before(async () => {
    service = await startService(idp, testEnv({ IDP_REGISTER_RATE_PER_MIN: '100' }), { fresh: true })
    db = service.ctx.database!.db as Kysely<IdpTables>
  })
  after(async () => service.close())

  async function register(fields: Record<string, string>, jar = new CookieJar()) {
    const page = await (await jar.fetch(`${service.url}/ui/register`)).text()
    return jar.fetch(`${service.url}/ui/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page), ...fields }).toString(),
    })
  }
  const mailTo = (to: string) =>
    db.selectFrom('dev_outbox').selectAll().where('recipient', '=', to).orderBy('created_at').execute()

  it('creates an account, mails a confirmation link that works once, and lets the new user sign in', async () => {
    const res = await register({ email: 'ada@example.com', password: 'correct horse battery', name: 'Ada' })
    assert.equal(res.status, 200)
    assert.match(await res.text(), /Check your email/)
    const [mail] = await mailTo('ada@example.com')
    assert.equal(mail?.subject, 'Confirm your email address')
    const link = /(http\S+\/ui\/verify-email\?token=\S+)/.exec(mail!.body)![1]!
    assert.equal((await fetch(link)).status, 200)
    const user = await db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', 'ada@example.com')
      .executeTakeFirstOrThrow()
    assert.ok(user.email_verified_at, 'the address is confirmed')
    assert.match(user.password_hash!, /^\$argon2id\$/)
    assert.equal((await fetch(link)).status, 400, 'the link works once')

    const jar = new CookieJar()
    const login = await (await jar.fetch(`${service.url}/ui/login`)).text()
    const signIn = await jar.fetch(`${service.url}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        email: 'ada@example.com',
        password: 'correct horse battery',
        csrf: csrfOf(login),
      }).toString(),
    })
    assert.equal(signIn.status, 303)
  })

  it('answers an existing address like a new one, telling its owner by email instead', async () => {
    const before = await db.selectFrom('users').select('id').execute()
    const res = await register({ email: DEMO_EMAIL.toUpperCase(), password: 'another long password' })
    assert.equal(res.status, 200)
    assert.match(await res.text(), /Check your email/)
    assert.equal(
      (await db.selectFrom('users').select('id').execute()).length,
      before.length,
      'no second account',
    )
    const mails = await mailTo(DEMO_EMAIL.toUpperCase())
    assert.equal(mails.at(-1)?.subject, 'You already have an account')
  })

  it('refuses a short password, a malformed address and a missing CSRF token, creating nothing', async () => {
    assert.equal((await register({ email: 'bob@example.com', password: 'short' })).status, 400)
    assert.equal((await register({ email: 'not-an-email', password: 'long enough password' })).status, 400)
    const jar = new CookieJar()
    await jar.fetch(`${service.url}/ui/register`)
    const forged = await jar.fetch(`${service.url}/ui/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf: 'forged',
        email: 'eve@example.com',
        password: 'long enough password',
      }).toString(),
    })
    assert.equal(forged.status, 403)
    const created = await db
      .selectFrom('users')
      .select('email')
      .where('email', 'in', ['bob@example.com', 'not-an-email', 'eve@example.com'])
      .execute()
    assert.deepEqual(created, [])
    assert.equal((await fetch(`${service.url}/ui/verify-email?token=made-up`)).status, 400)
  })

  it('shows the development outbox, escaped', async () => {
    const page = await (await fetch(`${service.url}/ui/dev/outbox`)).text()
    assert.match(page, /Confirm your email address/)
    assert.match(page, /ada@example\.com/)
  })

  async function signIn(email: string, password: string, jar = new CookieJar()) {
    const page = await (await jar.fetch(`${service.url}/ui/login`)).text()
    const res = await jar.fetch(`${service.url}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email, password, csrf: csrfOf(page) }).toString(),
    })
    return res.status
  }
  async function post(path: string, fields: Record<string, string>, from = path) {
    const jar = new CookieJar()
    const page = await (await jar.fetch(`${service.url}${from}`)).text()
    return jar.fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page), ...fields }).toString(),
    })
  }

  it('resets a forgotten password by a link that works once, signing out every session', async () => {
    await register({ email: 'grace@example.com', password: 'original password' })
    const session = new CookieJar()
    assert.equal(await signIn('grace@example.com', 'original password', session), 303)
    const asked = await post('/ui/forgot', { email: 'grace@example.com' })
    assert.equal(asked.status, 200)
    const mail = (await mailTo('grace@example.com')).at(-1)!
    assert.equal(mail.subject, 'Reset your password')
    const token = /\/ui\/reset\?token=(\S+)/.exec(mail.body)![1]!
    const reset = await post(
      '/ui/reset',
      { token, password: 'a brand new password' },
      `/ui/reset?token=${token}`,
    )
    assert.equal(reset.status, 200)
    assert.equal(await signIn('grace@example.com', 'original password'), 401)
    assert.equal(await signIn('grace@example.com', 'a brand new password'), 303)
    assert.equal((await session.fetch(`${service.url}/ui/account`)).status, 303, 'the old session is over')
    const again = await post(
      '/ui/reset',
      { token, password: 'yet another password' },
      `/ui/reset?token=${token}`,
    )
    assert.equal(again.status, 400, 'the link works once')
  })

  it('answers a reset request for an unknown address the same way, sending nothing', async () => {
    const res = await post('/ui/forgot', { email: 'nobody@example.com' })
    assert.equal(res.status, 200)
    assert.match(await res.text(), /If an account uses this address/)
    assert.deepEqual(await mailTo('nobody@example.com'), [])
  })
})
