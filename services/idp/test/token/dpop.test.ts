import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
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
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'

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

  it('binds the code itself to a key: dpop_jkt at /authorize, or a proof at /par (RFC 9449 §10)', async () => {
    const user = browser(service, agent.config, CALLBACK)
    const redeem = async (
      url: string,
      flow: { verifier: string; state: string; nonce: string },
      pair?: GenerateKeyPairResult,
    ) =>
      oidc.authorizationCodeGrant(
        agent.config,
        new URL(await user.browse(url)),
        { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce },
        undefined,
        pair ? { DPoP: handle(pair) } : undefined,
      )
    const refusedWith = (error: string) => (err: Error & { error?: string }) => err.error === error

    const bound = await user.start({ dpop_jkt: await thumbprint() })
    await assert.rejects(redeem(bound.url, bound), refusedWith('invalid_grant'), 'no proof')
    const again = await user.start({ dpop_jkt: await thumbprint() })
    await assert.rejects(
      redeem(again.url, again, await oidc.randomDPoPKeyPair('ES256')),
      refusedWith('invalid_grant'),
      'another key',
    )
    const right = await user.start({ dpop_jkt: await thumbprint() })
    assert.equal((await redeem(right.url, right, keys)).token_type, 'dpop')
    const malformed = new URL(await user.browse((await user.start({ dpop_jkt: 'short' })).url))
    assert.equal(malformed.searchParams.get('error'), 'invalid_request')

    // pushed with a proof (openid-client retries with the server's nonce): the code needs that key
    const pushed = async () => {
      const verifier = oidc.randomPKCECodeVerifier()
      const flow = { verifier, state: oidc.randomState(), nonce: oidc.randomNonce() }
      const url = await oidc.buildAuthorizationUrlWithPAR(
        agent.config,
        {
          redirect_uri: CALLBACK,
          scope: 'openid',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state: flow.state,
          nonce: flow.nonce,
        },
        { DPoP: handle() },
      )
      return { url: url.toString(), flow }
    }
    const first = await pushed()
    await assert.rejects(redeem(first.url, first.flow), refusedWith('invalid_grant'))
    const second = await pushed()
    assert.equal((await redeem(second.url, second.flow, keys)).token_type, 'dpop')
    await assert.rejects(
      oidc.buildAuthorizationUrlWithPAR(
        agent.config,
        {
          redirect_uri: CALLBACK,
          scope: 'openid',
          code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
          code_challenge_method: 'S256',
          dpop_jkt: await thumbprint(await oidc.randomDPoPKeyPair('ES256')),
        },
        { DPoP: handle() },
      ),
      refusedWith('invalid_dpop_proof'),
      'dpop_jkt must name the proof’s key',
    )
  })

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

    // a proof without the nonce: 401 with an ASCII challenge and the nonce, on which the client retries
    const withoutNonce = await fetch(`${service.url}/userinfo`, {
      headers: {
        authorization: `DPoP ${tokens.access_token}`,
        dpop: await new SignJWT({
          jti: crypto.randomUUID(),
          htm: 'GET',
          htu: `${service.url}/userinfo`,
          iat: Math.floor(Date.now() / 1000),
          ath: createHash('sha256').update(tokens.access_token).digest('base64url'),
        })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(keys.publicKey) })
          .sign(keys.privateKey),
      },
    })
    assert.equal(withoutNonce.status, 401, await withoutNonce.clone().text())
    assert.match(
      withoutNonce.headers.get('www-authenticate')!,
      /^DPoP error="use_dpop_nonce", error_description="[ -~]+", algs="/,
    )
    assert.ok(withoutNonce.headers.get('dpop-nonce'))
    assert.equal(((await withoutNonce.json()) as { error: string }).error, 'use_dpop_nonce')
    const learning = handle()
    assert.equal(
      (await oidc.fetchUserInfo(agent.config, tokens.access_token, sub, { DPoP: learning })).sub,
      sub,
    )

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
