import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, csrfOf, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'http://127.0.0.1:9/callback'
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})

// the ceremonies themselves run in Chromium (browser.test.ts); these are the refusals
describe('passkeys: what is refused', () => {
  let service: RunningService<IdpConfig>
  const jar = new CookieJar()
  let csrf: string

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    const { config } = await registerClient(service, { redirect_uris: [CALLBACK] })
    await browser(service, config, CALLBACK, { jar }).signIn()
    const account = await jar.fetch(`${service.url}/ui/account`)
    csrf = csrfOf(await account.text())
  })
  after(async () => service.close())

  it('offers the ceremony on the sign-in and account pages', async () => {
    const login = await (await new CookieJar().fetch(`${service.url}/ui/login`)).text()
    assert.match(login, /<script src="\/ui\/passkeys\.js" defer><\/script>/)
    const options = JSON.parse(
      /data-webauthn="get" data-options="([^"]+)"/.exec(login)![1]!.replaceAll('&quot;', '"'),
    )
    assert.equal(options.rpId, '127.0.0.1')
    assert.equal(options.userVerification, 'required')
    assert.match(options.challenge, /^[A-Za-z0-9_-]{43}$/)
    const script = await jar.fetch(`${service.url}/ui/passkeys.js`)
    assert.match(script.headers.get('content-type')!, /text\/javascript/)
  })

  it('keeps the password of a password session', async () => {
    const res = await jar.fetch(`${service.url}/ui/account/password/remove`, form({ csrf }))
    assert.equal(res.status, 403)
    assert.match(await res.text(), /Sign in with a passkey to remove your password/)
  })

  it('refuses a post without a session before looking at its body (issue 16, finding 6)', async () => {
    for (const body of ['{"csrf":-1}', '{"a":'])
      for (const path of ['/ui/account/password/remove', '/ui/account/passkeys'])
        assert.equal(
          (
            await fetch(`${service.url}${path}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body,
            })
          ).status,
          401,
          `${path} ${body}`,
        )
  })

  it('refuses forged and malformed credentials, and posts without the page CSRF', async () => {
    const forged = JSON.stringify({
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' },
      clientExtensionResults: {},
    })
    const signIn = await new CookieJar().fetch(
      `${service.url}/ui/login/passkey`,
      form({ csrf, credential: forged }),
    )
    assert.equal(signIn.status, 403, 'a fresh browser has no CSRF cookie')
    const withCookie = await jar.fetch(`${service.url}/ui/login/passkey`, form({ csrf, credential: forged }))
    assert.equal(withCookie.status, 401)
    const malformed = await jar.fetch(
      `${service.url}/ui/account/passkeys`,
      form({ csrf, credential: '{nope' }),
    )
    assert.equal(malformed.status, 400)
    assert.equal(((await malformed.json()) as { error: string }).error, 'invalid_request')
    const unknown = await jar.fetch(`${service.url}/ui/account/passkeys/delete`, form({ csrf, id: 'nope' }))
    assert.equal(unknown.status, 404)
    const bogus = await jar.fetch(`${service.url}/ui/account/passkeys`, form({ csrf, credential: forged }))
    assert.equal(bogus.status, 400)
  })
})
