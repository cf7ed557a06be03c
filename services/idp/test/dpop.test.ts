import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import {
  calculateJwkThumbprint,
  decodeJwt,
  exportJWK,
  type GenerateKeyPairResult,
  generateKeyPair,
  SignJWT,
} from 'jose'
import * as oidc from 'openid-client'
import { idp } from '../src/app.ts'
import type { IdpConfig } from '../src/config.ts'
import { ADMIN, browser, registerClient } from './flow.ts'

const CALLBACK = 'https://agent.example.com/callback'

describe('DPoP sender-constrained tokens (RFC 9449)', () => {
  let service: RunningService<IdpConfig>
  let agent: Awaited<ReturnType<typeof registerClient>>
  let keys: GenerateKeyPairResult

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    agent = await registerClient(service, { client_name: 'Agent', redirect_uris: [CALLBACK] })
    keys = await oidc.randomDPoPKeyPair('ES256')
  })
  after(async () => service.close())

  const handle = (pair = keys) => oidc.getDPoPHandle(agent.config, pair)
  const thumbprint = async (pair = keys) => calculateJwkThumbprint(await exportJWK(pair.publicKey))

  it('binds a code flow’s tokens to the key, at /token (nonce retry), /userinfo and refresh', async () => {
    assert.ok(agent.config.serverMetadata().dpop_signing_alg_values_supported?.includes('ES256'))
    const user = browser(service, agent.config, CALLBACK)
    const flow = await user.start({ scope: 'openid email offline_access' })
    const DPoP = handle()
    const tokens = await oidc.authorizationCodeGrant(
      agent.config,
      new URL(await user.browse(flow.url)),
      { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce },
      undefined,
      { DPoP },
    )
    assert.equal(tokens.token_type, 'dpop')
    assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt: await thumbprint() })
    const sub = tokens.claims()!.sub
    const info = await oidc.fetchUserInfo(agent.config, tokens.access_token, sub, { DPoP })
    assert.equal(info.sub, sub)

    // the bound token is useless as a bearer token
    const asBearer = await fetch(`${service.url}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    assert.equal(asBearer.status, 401)
    const noProof = await fetch(`${service.url}/userinfo`, {
      headers: { authorization: `DPoP ${tokens.access_token}` },
    })
    assert.equal(noProof.status, 401)
    assert.match(noProof.headers.get('www-authenticate')!, /^DPoP error="invalid_dpop_proof"/)

    // refresh: the same key only
    await assert.rejects(
      oidc.refreshTokenGrant(agent.config, tokens.refresh_token!),
      (err: Error & { error?: string }) => err.error === 'invalid_grant',
    )
    await assert.rejects(
      oidc.refreshTokenGrant(agent.config, tokens.refresh_token!, undefined, {
        DPoP: handle(await oidc.randomDPoPKeyPair('ES256')),
      }),
      (err: Error & { error?: string }) => err.error === 'invalid_grant',
    )
    const refreshed = await oidc.refreshTokenGrant(agent.config, tokens.refresh_token!, undefined, { DPoP })
    assert.equal(refreshed.token_type, 'dpop')
    assert.deepEqual(decodeJwt(refreshed.access_token).cnf, { jkt: await thumbprint() })
  })

  it('binds client-credentials tokens, and introspection shows the binding', async () => {
    const tokens = await oidc.clientCredentialsGrant(agent.config, { scope: 'jobs:read' }, { DPoP: handle() })
    assert.equal(tokens.token_type, 'dpop')
    const info = await oidc.tokenIntrospection(agent.config, tokens.access_token)
    assert.equal(info.token_type, 'DPoP')
    assert.deepEqual(info.cnf, { jkt: await thumbprint() })
  })

  it('refuses stale nonces, replays, wrong htu and proofs with private keys', async () => {
    const own = await generateKeyPair('ES256', { extractable: true })
    const jwk = await exportJWK(own.publicKey)
    const proof = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
      new SignJWT({
        jti: crypto.randomUUID(),
        htm: 'POST',
        htu: `${service.url}/token`,
        iat: Math.floor(Date.now() / 1000),
        ...claims,
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk, ...header })
        .sign(own.privateKey)
    const token = (dpop: string) =>
      fetch(`${service.url}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${agent.clientId}:${agent.secret}`).toString('base64')}`,
          dpop,
        },
        body: 'grant_type=client_credentials',
      })
    const first = await token(await proof({}))
    assert.equal(first.status, 400)
    assert.equal(((await first.json()) as { error: string }).error, 'use_dpop_nonce')
    const nonce = first.headers.get('dpop-nonce')!
    assert.ok(nonce)

    const good = await proof({ nonce })
    assert.equal((await token(good)).status, 200)
    const replayed = await token(good)
    assert.equal(((await replayed.json()) as { error: string }).error, 'invalid_dpop_proof')
    for (const bad of [
      await proof({ nonce, htu: `${service.url}/elsewhere` }),
      await proof({ nonce, htm: 'GET' }),
      await proof({ nonce, iat: Math.floor(Date.now() / 1000) - 600 }),
      await proof({ nonce }, { typ: 'JWT' }),
      await proof({ nonce }, { jwk: { ...jwk, d: (await exportJWK(own.privateKey)).d } }),
      'not-a-proof',
    ]) {
      const res = await token(bad)
      assert.equal(res.status, 400)
      assert.equal(((await res.json()) as { error: string }).error, 'invalid_dpop_proof')
    }
  })
})
