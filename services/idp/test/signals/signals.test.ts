import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, type JsonResponse, request, testEnv } from '@svc/kit/testing'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import type { Kysely } from 'kysely'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import type { IdpTables } from '../../src/db.ts'
import { ADMIN, browser, csrfOf, registerClient } from '@svc/testing/idp-flow'
import { startReceiver } from '../support/receiver.ts'

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type/'
const RISC = 'https://schemas.openid.net/secevent/risc/event-type/'
const PUSH_CALLBACK = 'https://push.example.com/callback'
const POLL_CALLBACK = 'https://poll.example.com/callback'

type Client = Awaited<ReturnType<typeof registerClient>>

describe('shared signals: SETs pushed (RFC 8935) and polled (RFC 8936)', () => {
  let service: RunningService<IdpConfig>
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let pusher: Client
  let poller: Client
  const subs: Record<string, string> = {}
  const jar = new CookieJar()

  const basic = (c: Client) => `Basic ${Buffer.from(`${c.clientId}:${c.secret}`).toString('base64')}`
  const ssf = (c: Client | undefined, path: string, body?: Record<string, unknown>) =>
    request(`${service.url}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: {
        ...(c ? { authorization: basic(c) } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
  /** What a receiver does with a SET: verify it against the issuer's JWKS, for itself. */
  const verifySet = async (token: string, audience: string) => {
    const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`))
    const { payload } = await jwtVerify(token, jwks, { issuer: service.url, audience, typ: 'secevent+jwt' })
    return payload as {
      jti: string
      sub_id: { format: string; iss: string; sub: string }
      events: Record<string, Record<string, unknown>>
    }
  }
  /** The SETs pushed so far, once `count` have arrived. */
  const pushedEvents = async (count: number) =>
    (await receiver.arrived(count)).map((d) => ({ contentType: d.headers['content-type'], token: d.body }))
  const accountPost = async (path: string, fields: Record<string, string>) => {
    const account = await (await jar.fetch(`${service.url}/ui/account`)).text()
    return jar.fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(account), ...fields }).toString(),
    })
  }
  /** One session (a fresh sign-in, then the same session) in which both clients get tokens. */
  const signInBoth = async (password = service.ctx.config.demoPassword, email?: string) => {
    for (const [client, callback, prompt] of [
      [pusher, PUSH_CALLBACK, 'login'],
      [poller, POLL_CALLBACK, undefined],
    ] as const) {
      const tokens = await browser(service, client.config, callback, {
        jar,
        password,
        ...(email ? { email } : {}),
        consent: { decision: 'approve', scopes: ['email'] },
      }).signIn(prompt ? { prompt } : {})
      subs[client.clientId] = tokens.claims()!.sub
    }
  }
  /** The poller's waiting SETs, acknowledged as it takes them. */
  const pollAll = async () => {
    const res = await ssf(poller, '/ssf/poll', { maxEvents: 10 })
    const sets = res.body.sets as Record<string, string>
    const payloads = await Promise.all(Object.values(sets).map((t) => verifySet(t, poller.clientId)))
    await ssf(poller, '/ssf/poll', { ack: Object.keys(sets), maxEvents: 0 })
    return payloads
  }

  before(async () => {
    // RFC 8935 §2: a receiver accepts a SET with 202
    receiver = await startReceiver(202)
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
    pusher = await registerClient(service, {
      client_name: 'Pusher',
      first_party: false,
      redirect_uris: [PUSH_CALLBACK],
    })
    poller = await registerClient(service, {
      client_name: 'Poller',
      first_party: false,
      redirect_uris: [POLL_CALLBACK],
    })
  })
  after(async () => {
    await service.close()
    await receiver.close()
  })

  it('publishes its transmitter metadata and manages each client’s stream', async () => {
    const config = await request(`${service.url}/.well-known/ssf-configuration`)
    assert.equal(config.body.issuer, service.url)
    assert.deepEqual(config.body.delivery_methods_supported, ['urn:ietf:rfc:8935', 'urn:ietf:rfc:8936'])
    assert.ok((config.body.events_supported as string[]).includes(`${CAEP}session-revoked`))

    const refused = async (res: Promise<JsonResponse>, status: number) =>
      assert.equal((await res).status, status)
    await refused(ssf(pusher, '/ssf/stream', { delivery: 'push' }), 400)
    await refused(ssf(pusher, '/ssf/stream', { delivery: 'poll', endpoint_url: receiver.url }), 400)
    await refused(
      ssf(pusher, '/ssf/stream', { delivery: 'push', endpoint_url: 'http://push.example.com/e' }),
      400,
    )
    await refused(ssf(undefined, '/ssf/stream', { delivery: 'poll' }), 401)
    await refused(ssf(pusher, '/ssf/poll', {}), 400)

    const push = await ssf(pusher, '/ssf/stream', { delivery: 'push', endpoint_url: receiver.url })
    assert.deepEqual(push.body, {
      status: 'enabled',
      delivery: 'push',
      endpoint_url: receiver.url,
      backlog: 0,
    })
    assert.equal((await ssf(poller, '/ssf/stream', { delivery: 'poll' })).body.delivery, 'poll')
    assert.deepEqual((await ssf(poller, '/ssf/status')).body, {
      status: 'enabled',
      delivery: 'poll',
      backlog: 0,
    })
  })

  it('sends session-revoked when the session ends, with sub_id in each receiver’s namespace', async () => {
    await signInBoth()
    receiver.failNext(1)
    assert.equal((await accountPost('/ui/logout', {})).status < 400, true)
    const [set] = await pushedEvents(1)
    assert.equal(set!.contentType, 'application/secevent+jwt')
    const payload = await verifySet(set!.token, pusher.clientId)
    assert.deepEqual(payload.sub_id, { format: 'iss_sub', iss: service.url, sub: subs[pusher.clientId] })
    assert.equal(typeof payload.events[`${CAEP}session-revoked`]!.event_timestamp, 'number')

    const [polled, ...rest] = await pollAll()
    assert.equal(rest.length, 0)
    assert.equal(polled!.sub_id.sub, subs[poller.clientId])
    assert.notEqual(subs[poller.clientId], subs[pusher.clientId])
    assert.ok(polled!.events[`${CAEP}session-revoked`])
    assert.deepEqual(
      (await ssf(poller, '/ssf/poll', {})).body,
      { sets: {}, moreAvailable: false },
      'acknowledged',
    )
    assert.equal((await ssf(pusher, '/ssf/status')).body.backlog, 0, 'the retried push was accepted')
  })

  it('sends account-disabled when the admin disables the account, which then cannot sign in', async () => {
    await signInBoth()
    const admin = (method: string, path: string, body?: unknown) =>
      request(`${service.url}/manage/v1${path}`, {
        method,
        headers: { 'x-admin-token': ADMIN, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      })
    const user = (await admin('GET', '/users?email=DEMO@svc.local')).body as { id: string }
    const disabled = await admin('POST', `/users/${user.id}/disable`, { reason: 'hijacking' })
    assert.equal(disabled.body.disabled, true)
    const [set] = await pollAll()
    assert.deepEqual(set!.events[`${RISC}account-disabled`], { reason: 'hijacking' })
    assert.equal(set!.sub_id.sub, subs[poller.clientId])
    const browser = new CookieJar()
    const login = await (await browser.fetch(`${service.url}/ui/login`)).text()
    const refused = await browser.fetch(`${service.url}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        email: 'demo@svc.local',
        password: service.ctx.config.demoPassword,
        csrf: csrfOf(login),
        return_to: '/ui/account',
      }).toString(),
    })
    assert.equal(refused.status, 403)
    assert.match(await refused.text(), /This account is disabled/)
    assert.equal((await admin('POST', `/users/${user.id}/enable`)).body.disabled, false)
    assert.equal((await admin('POST', '/users/usr_nobody/disable')).status, 404)
    await pushedEvents(2)
    receiver.deliveries.splice(1)
  })

  it('sends credential-change, token-claims-change and account-purged as the account changes', async () => {
    await signInBoth()
    await accountPost('/ui/account/password', {
      current_password: service.ctx.config.demoPassword,
      new_password: 'another-password-42',
    })
    const credential = (await pollAll()).map((p) => p.events[`${CAEP}credential-change`]).find(Boolean)!
    assert.equal(credential.credential_type, 'password')
    assert.equal(credential.change_type, 'update')

    await accountPost('/ui/account/email', { email: 'demo.signals@svc.local' })
    const db = service.ctx.database!.db as Kysely<IdpTables>
    const mail = await db
      .selectFrom('dev_outbox')
      .selectAll()
      .where('recipient', '=', 'demo.signals@svc.local')
      .executeTakeFirstOrThrow()
    await fetch(/(http\S+\/ui\/account\/email\/confirm\?token=\S+)/.exec(mail.body)![1]!)
    const [claims] = (await pollAll()).map((p) => p.events[`${CAEP}token-claims-change`])
    assert.deepEqual(claims!.claims, { email: 'demo.signals@svc.local', email_verified: true })

    await accountPost('/ui/account/delete', { confirm: 'delete my account' })
    const [purged] = await pollAll()
    assert.deepEqual(purged!.events[`${RISC}account-purged`], {})
    // the pushed stream got the same four events, in order
    const sets = await Promise.all((await pushedEvents(4)).map((p) => verifySet(p.token, pusher.clientId)))
    assert.deepEqual(
      sets.map((set) => Object.keys(set.events)[0]),
      [
        `${CAEP}session-revoked`,
        `${CAEP}credential-change`,
        `${CAEP}token-claims-change`,
        `${RISC}account-purged`,
      ],
    )
  })

  it('unsubscribes with an empty delivery', async () => {
    assert.deepEqual((await ssf(poller, '/ssf/stream', { delivery: '' })).body, {
      status: 'disabled',
      backlog: 0,
    })
    assert.equal((await ssf(poller, '/ssf/poll', {})).status, 400)
  })
})
