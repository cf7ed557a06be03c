import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { CookieJar } from '@svc/kit/testing'
import { type Stack, signIn, startStack, toCallback } from './stack.ts'

describe('rental sign-in through the idp', () => {
  let stack: Stack
  before(async () => {
    stack = await startStack()
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
    assert.equal(res.headers.get('location'), '/')
    assert.ok(jar.get('rental_session'))
    const attributes = jar.attributes.get('rental_session')!
    assert.match(attributes, /HttpOnly/i)
    assert.match(attributes, /SameSite=Lax/i)
    assert.doesNotMatch(attributes, /Secure/i)
    const me = await jar.fetch(`${stack.rental.url}/api/me`)
    assert.equal(me.status, 200)
    const body = (await me.json()) as Record<string, any>
    assert.ok(body.client.subject)
    assert.match(body.client.email, /@/)
    assert.match(body.client.client_did, /^did:key:z6Mk/)
    assert.match(body.csrf_token, /^[A-Za-z0-9_-]{43}$/)
    assert.equal(body.csrf_header, 'x-csrf-token')
    assert.equal(body.ledger_url, 'http://127.0.0.1:9')
  })
})
