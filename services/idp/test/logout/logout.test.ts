import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import type * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'http://127.0.0.1:9/callback'
const AFTER_LOGOUT = 'http://127.0.0.1:9/signed-out'

describe('logout: RP-initiated, back-channel and front-channel', () => {
  let service: RunningService<IdpConfig>
  let config: oidc.Configuration
  let clientId: string
  let receiver: Server
  const logoutTokens: string[] = []
  let refuseNext = 0

  async function arrived(count: number) {
    const deadline = Date.now() + 20_000
    while (logoutTokens.length < count) {
      if (Date.now() > deadline) throw new Error(`${logoutTokens.length} of ${count} logout tokens arrived`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  before(async () => {
    // the client's back-channel endpoint, as a relying party would write it
    receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => {
        body += chunk
      })
      req.on('end', () => {
        logoutTokens.push(new URLSearchParams(body).get('logout_token') ?? '')
        if (refuseNext > 0) {
          refuseNext--
          res.writeHead(503).end()
        } else res.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    const port = (receiver.address() as AddressInfo).port
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    ;({ config, clientId } = await registerClient(service, {
      redirect_uris: [CALLBACK],
      post_logout_redirect_uris: [AFTER_LOGOUT],
      backchannel_logout_uri: `http://127.0.0.1:${port}/backchannel`,
      frontchannel_logout_uri: `http://127.0.0.1:${port}/frontchannel`,
    }))
  })
  after(async () => {
    await service.close()
    await new Promise((resolve) => receiver.close(resolve))
  })

  it('ends the session, posts a logout token the client can verify, and returns to the allow-listed URI', async () => {
    const user = browser(service, config, CALLBACK)
    const tokens = await user.signIn()
    const idClaims = tokens.claims()!
    const res = await user.jar.fetch(
      `${service.url}/logout?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: AFTER_LOGOUT, state: 'xyz' })}`,
    )
    assert.equal(res.status, 200)
    const page = await res.text()
    // on to the application by a script once the frames loaded, with the link meanwhile
    assert.match(page, /<script src="\/ui\/signed-out\.js" defer><\/script>/)
    assert.match(
      page,
      /<a\s+href="http:\/\/127\.0\.0\.1:9\/signed-out\?state=xyz"\s+class="svc-button primary"\s+data-onward-link\s+data-onward-app="[^"]+"\s*>Back to [^<]+<\/a/,
    )
    assert.match(
      page,
      new RegExp(
        `<iframe src="http://127\\.0\\.0\\.1:\\d+/frontchannel\\?iss=[^"]+&amp;sid=${idClaims.sid}" hidden`,
      ),
    )

    await arrived(1)
    const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`))
    const { payload, protectedHeader } = await jwtVerify(logoutTokens[0]!, jwks, {
      issuer: service.url,
      audience: clientId,
      typ: 'logout+jwt',
    })
    assert.equal(protectedHeader.alg, 'RS256')
    assert.equal(payload.sid, idClaims.sid)
    assert.equal(payload.sub, idClaims.sub)
    assert.deepEqual(payload.events, { 'http://schemas.openid.net/event/backchannel-logout': {} })
    assert.equal(payload.nonce, undefined)
    assert.ok(typeof payload.iat === 'number' && payload.jti)

    const account = await user.jar.fetch(`${service.url}/ui/account`)
    assert.equal(account.status, 303, 'the session is over')
  })

  it('refuses an unregistered post-logout URI or a forged hint on its own page, never redirecting', async () => {
    const user = browser(service, config, CALLBACK)
    const tokens = await user.signIn()
    const bad = await user.jar.fetch(
      `${service.url}/logout?${new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://evil.example/' })}`,
    )
    assert.equal(bad.status, 400)
    assert.equal(bad.headers.get('location'), null)
    const forged = await user.jar.fetch(
      `${service.url}/logout?${new URLSearchParams({ id_token_hint: `${tokens.id_token!.slice(0, -4)}AAAA` })}`,
    )
    assert.equal(forged.status, 400)
    assert.equal(
      (await user.jar.fetch(`${service.url}/ui/account`)).status,
      200,
      'a refused logout leaves the session alone',
    )
  })

  it('retries a back-channel delivery the client refused', async () => {
    const user = browser(service, config, CALLBACK)
    const tokens = await user.signIn()
    const before = logoutTokens.length
    refuseNext = 1
    const res = await user.jar.fetch(
      `${service.url}/logout?${new URLSearchParams({ id_token_hint: tokens.id_token! })}`,
    )
    assert.equal(res.status, 200)
    await arrived(before + 2)
    const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`))
    const retried = await jwtVerify(logoutTokens[before + 1]!, jwks, {
      issuer: service.url,
      audience: clientId,
      typ: 'logout+jwt',
    })
    assert.equal(retried.payload.sid, tokens.claims()!.sid)
  })
})
