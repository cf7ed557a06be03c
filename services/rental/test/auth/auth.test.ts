import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { randomBytes } from 'node:crypto'
import { Sealer } from '@svc/kit'
import { CookieJar } from '@svc/kit/testing'
import { generateKeyPair, SignJWT } from 'jose'
import type { Kysely } from 'kysely'
import { SigningKeys } from '../../../idp/src/areas/keys/service.ts'
import type { RentalTables } from '../../src/db.ts'
import { eventually, type Stack, signIn, startStack, toCallback } from '../support/stack.ts'

describe('rental sign-in through the idp, logout and back-channel logout', () => {
  let stack: Stack
  let keys: SigningKeys
  let clientId: string
  before(async () => {
    stack = await startStack()
    keys = new SigningKeys(
      stack.idp.ctx.database!.db as never,
      new Sealer(stack.idp.ctx.config.encryptionKey),
      { rotationDays: 90, retentionHours: 24 },
    )
    const row = await (stack.rental.ctx.database!.db as Kysely<RentalTables>)
      .selectFrom('idp_clients')
      .select('client_id')
      .executeTakeFirstOrThrow()
    clientId = row.client_id
  })
  after(async () => stack.close())

  it('GET /auth/login redirects to the idp with PKCE S256, state and nonce, and keeps the login in an HttpOnly cookie', async () => {
    const jar = new CookieJar()
    const res = await jar.fetch(`${stack.rental.url}/auth/login`)
    assert.equal(res.status, 302)
    const to = new URL(res.headers.get('location')!)
    assert.equal(`${to.origin}${to.pathname}`, `${stack.idp.url}/authorize`)
    assert.equal(to.searchParams.get('code_challenge_method'), 'S256')
    assert.match(to.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/)
    assert.ok(to.searchParams.get('state'))
    assert.ok(to.searchParams.get('nonce'))
    assert.equal(to.searchParams.get('redirect_uri'), `${stack.rental.url}/auth/callback`)
    assert.match(jar.attributes.get('rental_login')!, /HttpOnly/i)
    assert.match(jar.attributes.get('rental_login')!, /SameSite=Lax/i)
  })

  it('signs in the demo user: callback, session cookie, /api/me', async () => {
    const { jar, callback } = await toCallback(stack)
    assert.ok(new URL(callback).searchParams.get('iss'))
    const res = await jar.fetch(callback)
    assert.equal(res.status, 302)
    assert.equal(res.headers.get('location'), '/console')
    assert.ok(jar.get('rental_session'))
    const attributes = jar.attributes.get('rental_session')!
    assert.match(attributes, /HttpOnly/i)
    assert.match(attributes, /SameSite=Lax/i)
    assert.doesNotMatch(attributes, /Secure/i)
    const me = await jar.fetch(`${stack.rental.url}/api/me`)
    assert.equal(me.status, 200)
    const body = (await me.json()) as {
      client: { subject: string; email: string; client_did: string }
      csrf_token: string
      csrf_header: string
      ledger_url: string
    }
    assert.ok(body.client.subject)
    assert.match(body.client.email, /@/)
    assert.match(body.client.client_did, /^did:key:z6Mk/)
    assert.match(body.csrf_token, /^[A-Za-z0-9_-]{43}$/)
    assert.equal(body.csrf_header, 'x-csrf-token')
    assert.equal(body.ledger_url, 'http://127.0.0.1:9')
  })

  const withParam = (url: string, name: string, value: string) => {
    const u = new URL(url)
    u.searchParams.set(name, value)
    return u.toString()
  }
  const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code

  it('refuses a callback with a wrong state: 400, no session, and the login cannot be completed after', async () => {
    const { jar, callback } = await toCallback(stack)
    const res = await jar.fetch(withParam(callback, 'state', 'forged-state'))
    assert.equal(res.status, 400)
    assert.equal(await errorOf(res), 'invalid_state')
    assert.equal(jar.get('rental_session'), undefined)
    const again = await jar.fetch(callback)
    assert.equal(again.status, 400)
    assert.equal(jar.get('rental_session'), undefined)
  })

  it('refuses a callback whose iss is not the idp (RFC 9207): 400, no session', async () => {
    const { jar, callback } = await toCallback(stack)
    const res = await jar.fetch(withParam(callback, 'iss', 'http://127.0.0.1:9'))
    assert.equal(res.status, 400)
    assert.equal(await errorOf(res), 'invalid_issuer')
    assert.equal(jar.get('rental_session'), undefined)
    const missing = await toCallback(stack)
    const u = new URL(missing.callback)
    u.searchParams.delete('iss')
    const res2 = await missing.jar.fetch(u.toString())
    assert.equal(res2.status, 400)
    assert.equal(missing.jar.get('rental_session'), undefined)
  })

  it('refuses a callback without a pending login in the browser (login CSRF)', async () => {
    const { callback } = await toCallback(stack)
    const stranger = new CookieJar()
    const res = await stranger.fetch(callback)
    assert.equal(res.status, 400)
    assert.equal(await errorOf(res), 'login_expired')
    assert.equal(stranger.get('rental_session'), undefined)
  })

  it('refuses a replayed callback and a replayed code: one token exchange per login', async () => {
    const { jar, callback } = await toCallback(stack)
    assert.equal((await jar.fetch(callback)).status, 302)
    const session = jar.get('rental_session')
    // the same callback again: its login is spent
    const replay = await jar.fetch(callback)
    assert.equal(replay.status, 400)
    assert.equal(jar.get('rental_session'), session)
    // the spent code under a fresh login of another browser: the idp refuses the exchange
    const other = await toCallback(stack)
    const fresh = new URL(other.callback)
    const reused = withParam(callback, 'state', fresh.searchParams.get('state')!)
    const res = await other.jar.fetch(reused)
    assert.equal(res.status, 400)
    assert.equal(await errorOf(res), 'login_failed')
    assert.equal(other.jar.get('rental_session'), undefined)
  })

  it('answers 401 to S routes without a session, and POST /auth/logout ends the session', async () => {
    const anonymous = await fetch(`${stack.rental.url}/api/me`)
    assert.equal(anonymous.status, 401)
    assert.equal(await errorOf(anonymous), 'unauthenticated')
    assert.equal((await fetch(`${stack.rental.url}/auth/logout`, { method: 'POST' })).status, 401)

    const { jar } = await signIn(stack)
    const res = await jar.fetch(`${stack.rental.url}/auth/logout`, { method: 'POST' })
    assert.equal(res.status, 200)
    const body = (await res.json()) as { signed_out: boolean; idp_logout_url: string }
    assert.equal(body.signed_out, true)
    assert.ok(body.idp_logout_url.startsWith(`${stack.idp.url}/logout?`))
    assert.match(new URL(body.idp_logout_url).searchParams.get('id_token_hint') ?? '', /^eyJ/)
    assert.equal(jar.get('rental_session'), undefined)
    const me = await jar.fetch(`${stack.rental.url}/api/me`)
    assert.equal(me.status, 401)
  })

  it('a sign-out at the idp ends the console session through back-channel logout', async () => {
    // two browsers, each with its own idp session
    const { jar } = await signIn(stack, undefined, { freshIdpSession: true })
    const kept = jar.get('rental_session')!
    const bystander = await signIn(stack, undefined, { freshIdpSession: true })
    const idpLogout = await jar.fetch(`${stack.idp.url}/logout`)
    assert.equal(idpLogout.status, 200)
    await eventually('the back-channel logout arrives', async () => {
      const me = await fetch(`${stack.rental.url}/api/me`, { headers: { cookie: `rental_session=${kept}` } })
      return me.status === 401
    })
    // another idp session (another browser) is untouched
    assert.equal((await bystander.jar.fetch(`${stack.rental.url}/api/me`)).status, 200)
  })

  describe('the back-channel receiver', () => {
    const post = (token: string) =>
      fetch(`${stack.rental.url}/auth/backchannel-logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ logout_token: token }).toString(),
      })
    const claims = (extra: Record<string, unknown> = {}) => {
      const now = Math.floor(Date.now() / 1000)
      return {
        iss: stack.idp.url,
        aud: clientId,
        iat: now,
        exp: now + 120,
        jti: randomBytes(12).toString('base64url'),
        sid: `sid-${randomBytes(6).toString('hex')}`,
        events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
        ...extra,
      }
    }

    it('ends the sessions of the sid and refuses the same jti twice', async () => {
      const { jar } = await signIn(stack)
      const row = await (stack.rental.ctx.database!.db as Kysely<RentalTables>)
        .selectFrom('console_sessions')
        .select(['idp_sid', 'subject'])
        .where('ended_at', 'is', null)
        .orderBy('created_at', 'desc')
        .executeTakeFirstOrThrow()
      const token = await keys.sign(claims({ sid: row.idp_sid, sub: row.subject }), 'RS256', 'logout+jwt')
      const res = await post(token)
      assert.equal(res.status, 200)
      assert.ok(((await res.json()) as { ended: number }).ended >= 1)
      assert.equal((await jar.fetch(`${stack.rental.url}/api/me`)).status, 401)
      const replay = await post(token)
      assert.equal(replay.status, 400)
      assert.equal(await errorOf(replay), 'invalid_logout_token')
    })

    it('refuses a token signed by another key, for another audience, with a nonce, without the event or without sid and sub', async () => {
      const { privateKey } = await generateKeyPair('RS256')
      const forged = await new SignJWT(claims())
        .setProtectedHeader({ alg: 'RS256', typ: 'logout+jwt', kid: 'forged' })
        .sign(privateKey)
      const { sid: _sid, ...noSid } = claims()
      for (const token of [
        forged,
        await keys.sign(claims({ aud: 'someone-else' }), 'RS256', 'logout+jwt'),
        await keys.sign(claims({ nonce: 'n' }), 'RS256', 'logout+jwt'),
        await keys.sign(claims({ events: {} }), 'RS256', 'logout+jwt'),
        await keys.sign(noSid, 'RS256', 'logout+jwt'),
        await keys.sign(claims(), 'RS256', 'JWT'),
        'not-a-jwt',
      ]) {
        const res = await post(token)
        assert.equal(res.status, 400, token)
        assert.equal(await errorOf(res), 'invalid_logout_token')
      }
      const missing = await fetch(`${stack.rental.url}/auth/backchannel-logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
      })
      assert.equal(missing.status, 400)
    })
  })
})
