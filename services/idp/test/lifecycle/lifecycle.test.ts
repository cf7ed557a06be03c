import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, request, testEnv } from '@svc/kit/testing'
import type { Kysely } from 'kysely'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import type { IdpTables } from '../../src/db.ts'
import { ADMIN, browser, csrfOf } from '@svc/testing/idp-flow'
import { startReceiver } from '../support/receiver.ts'

const CALLBACK = 'https://shop.example.com/callback'

interface Received {
  headers: Record<string, string | string[] | undefined>
  raw: string
  body: { event: string; sub: string; occurred_at: string; data: Record<string, unknown> }
}

describe('lifecycle webhooks', () => {
  let service: RunningService<IdpConfig>
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let key: string
  let client: { client_id: string; client_secret: string; webhook_secret: string }
  let config: oidc.Configuration
  let email = DEMO_EMAIL
  const jar = new CookieJar()

  /** The events received so far, once `count` have arrived. */
  const events = async (count: number): Promise<Received[]> =>
    (await receiver.arrived(count)).map((d) => ({
      headers: d.headers,
      raw: d.body,
      body: JSON.parse(d.body) as Received['body'],
    }))
  const outboxLink = async (to: string, path: string) => {
    const db = service.ctx.database!.db as Kysely<IdpTables>
    const mail = await db
      .selectFrom('dev_outbox')
      .selectAll()
      .where('recipient', '=', to)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow()
    return new RegExp(`(http\\S+${path}\\?token=\\S+)`).exec(mail.body)![1]!
  }
  const post = async (path: string, fields: Record<string, string>) => {
    const account = await (await jar.fetch(`${service.url}/ui/account`)).text()
    return jar.fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(account), ...fields }).toString(),
    })
  }
  const signIn = (password = service.ctx.config.demoPassword) =>
    browser(service, config, CALLBACK, {
      jar,
      email,
      password,
      consent: { decision: 'approve', scopes: ['email', 'offline_access'] },
    }).signIn({ scope: 'openid email offline_access', prompt: 'login' })

  before(async () => {
    receiver = await startReceiver()
    service = await startService(
      idp,
      testEnv({
        IDP_ADMIN_TOKEN: ADMIN,
        IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
        IDP_TOKEN_RATE_PER_MIN_IP: '0',
        IDP_LIFECYCLE_RETRY_DELAY_S: '1',
      }),
      { fresh: true },
    )
    const signed = await request(`${service.url}/orgs/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Shop', contact_email: 'ops@shop.example.com', accept_terms: true }),
    })
    key = signed.body.api_key as string
    const created = await request(`${service.url}/orgs/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Shop', client_type: 'confidential', redirect_uris: [CALLBACK] }),
    })
    client = created.body as typeof client
    config = await oidc.discovery(
      new URL(service.url),
      client.client_id,
      client.client_secret,
      oidc.ClientSecretBasic(client.client_secret),
      { execute: [oidc.allowInsecureRequests] },
    )
  })
  after(async () => {
    await service.close()
    await receiver.close()
  })

  const setUrl = (url: string, apiKey = key) =>
    request(`${service.url}/orgs/clients/${client.client_id}/lifecycle-url`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lifecycle_webhook_url: url }),
    })

  /** What a receiver does: the HMAC of the exact bytes under the webhook secret, in constant time. */
  const verify = (event: Received) => {
    const expected = `sha256=${createHmac('sha256', client.webhook_secret).update(event.raw).digest('hex')}`
    assert.equal(event.headers['x-svc-signature'], expected)
    assert.equal(event.headers['x-svc-event'], event.body.event)
    assert.ok(!Number.isNaN(Date.parse(event.body.occurred_at)))
  }

  it('registers the URL (also for back-channel logout), only for the organization’s own client', async () => {
    assert.equal((await setUrl('http://shop.example.com/events')).status, 400)
    const rival = await request(`${service.url}/orgs/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rival', contact_email: 'ops@rival.example.com', accept_terms: true }),
    })
    assert.equal((await setUrl(receiver.url, rival.body.api_key as string)).status, 404)
    const set = await setUrl(receiver.url)
    assert.equal(set.status, 200)
    assert.equal(set.body.lifecycle_webhook_url, receiver.url)
    assert.equal(set.body.backchannel_logout_uri, receiver.url)
  })

  it('tells the client of a withdrawn consent with its own sub, signed over the exact bytes', async () => {
    const tokens = await signIn()
    const sub = tokens.claims()!.sub
    assert.equal((await post('/ui/account/consents/withdraw', { client_id: client.client_id })).status, 303)
    const [event] = await events(1)
    verify(event!)
    assert.deepEqual(
      { ...event!.body, occurred_at: undefined },
      {
        event: 'consent.revoked',
        sub,
        occurred_at: undefined,
        data: {},
      },
    )
  })

  it('tells of a password change, retrying a failed delivery, and the refresh tokens die', async () => {
    const tokens = await signIn()
    receiver.failNext(1)
    const newPassword = 'a-new-password-123'
    const changed = await post('/ui/account/password', {
      current_password: service.ctx.config.demoPassword,
      new_password: newPassword,
    })
    assert.equal(changed.status, 200)
    const [, event] = await events(2)
    verify(event!)
    assert.equal(event!.body.event, 'user.password_changed')
    assert.deepEqual(event!.body.data, { via: 'account' })
    await assert.rejects(
      oidc.refreshTokenGrant(config, tokens.refresh_token!),
      (err: Error & { error?: string }) => err.error === 'invalid_grant',
    )
    const deliveries = await request(
      `${service.url}/manage/v1/lifecycle-deliveries?client_id=${client.client_id}`,
      { headers: { 'x-admin-token': ADMIN } },
    )
    const delivery = (deliveries.body.deliveries as Array<Record<string, unknown>>)[0]!
    assert.equal(delivery.event, 'user.password_changed')
    assert.equal(delivery.status, 'delivered')
    assert.equal(delivery.attempts, 2, 'the first attempt failed and was retried')
    assert.equal(delivery.last_status, 204)
    const wrong = await post('/ui/account/password', {
      current_password: 'not-it',
      new_password: 'whatever-else-1',
    })
    assert.equal(wrong.status, 400)
    await signIn(newPassword)
  })

  it('tells of a new address once it is confirmed from the link sent to it', async () => {
    const newEmail = 'demo.new@svc.local'
    assert.equal((await post('/ui/account/email', { email: newEmail })).status, 200)
    const link = await outboxLink(newEmail, '/ui/account/email/confirm')
    assert.equal(receiver.deliveries.length, 2, 'nothing changes before the link is followed')
    assert.equal((await fetch(link)).status, 200)
    const [, , event] = await events(3)
    verify(event!)
    assert.deepEqual(event!.body.data, { email: newEmail, email_verified: true })
    assert.equal((await fetch(link)).status, 400, 'the link works once')
    email = newEmail
  })

  it('tells of a deleted account, which no longer signs in', async () => {
    await signIn('a-new-password-123')
    assert.equal((await post('/ui/account/delete', { confirm: 'no' })).status, 400)
    assert.equal((await post('/ui/account/delete', { confirm: 'delete my account' })).status, 200)
    const [, , , event] = await events(4)
    verify(event!)
    assert.equal(event!.body.event, 'user.deleted')
    const login = await new CookieJar().fetch(`${service.url}/ui/login`)
    const page = await login.text()
    const attempt = await fetch(`${service.url}/ui/login`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: login.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; '),
      },
      body: new URLSearchParams({
        email,
        password: 'a-new-password-123',
        csrf: csrfOf(page),
        return_to: '/ui/account',
      }).toString(),
    })
    assert.equal(attempt.status, 401)
  })
})
