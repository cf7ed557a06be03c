import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { exportJWK, type GenerateKeyPairResult, generateKeyPair, SignJWT } from 'jose'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN } from '@svc/testing/idp-flow'

const CALLBACK = 'https://agent.example.com/callback'
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

describe('private_key_jwt client authentication (RFC 7523)', () => {
  let service: RunningService<IdpConfig>
  let clientId: string
  let keys: GenerateKeyPairResult

  const register = (body: Record<string, unknown>) =>
    request(`${service.url}/manage/v1/clients`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Agent',
        client_type: 'confidential',
        redirect_uris: [CALLBACK],
        ...body,
      }),
    })

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    keys = await generateKeyPair('ES256', { extractable: true })
    const created = await register({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [{ ...(await exportJWK(keys.publicKey)), alg: 'ES256', use: 'sig' }] },
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    assert.equal(created.body.client_secret, undefined, 'a key-based client has no secret')
    clientId = created.body.client_id as string
  })
  after(async () => service.close())

  const assertion = (
    claims: Record<string, unknown> = {},
    key: GenerateKeyPairResult['privateKey'] = keys.privateKey,
  ) => {
    const now = Math.floor(Date.now() / 1000)
    return new SignJWT({
      jti: crypto.randomUUID(),
      iss: clientId,
      sub: clientId,
      aud: service.url,
      iat: now,
      exp: now + 60,
      ...claims,
    })
      .setProtectedHeader({ alg: 'ES256' })
      .sign(key)
  }

  const token = (fields: Record<string, string>) =>
    fetch(`${service.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...fields }).toString(),
    })

  it('authenticates through openid-client’s PrivateKeyJwt', async () => {
    const config = await oidc.discovery(
      new URL(service.url),
      clientId,
      undefined,
      oidc.PrivateKeyJwt(keys.privateKey),
      {
        execute: [oidc.allowInsecureRequests],
      },
    )
    const metadata = config.serverMetadata()
    assert.ok(metadata.token_endpoint_auth_methods_supported?.includes('private_key_jwt'))
    assert.ok(metadata.token_endpoint_auth_signing_alg_values_supported?.includes('ES256'))
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'jobs:read' })
    assert.equal(tokens.scope, 'jobs:read')
    const info = await oidc.tokenIntrospection(config, tokens.access_token)
    assert.equal(info.active, true)
    assert.equal(info.sub, clientId)
  })

  it('refuses a replayed jti, a wrong audience, a foreign key, a long life and a secret', async () => {
    const once = await assertion()
    const fields = { client_assertion_type: JWT_BEARER, client_assertion: once }
    assert.equal((await token(fields)).status, 200)
    const replay = await token(fields)
    assert.equal(replay.status, 401)
    assert.match(((await replay.json()) as { error_description: string }).error_description, /replayed/)

    const stranger = await generateKeyPair('ES256')
    for (const bad of [
      await assertion({ aud: 'https://elsewhere.example' }),
      await assertion({}, stranger.privateKey),
      await assertion({ exp: Math.floor(Date.now() / 1000) + 3600 }),
      await assertion({ exp: Math.floor(Date.now() / 1000) - 600 }),
      'not-a-jwt',
    ]) {
      const res = await token({ client_assertion_type: JWT_BEARER, client_assertion: bad })
      assert.equal(res.status, 401)
      assert.equal(((await res.json()) as { error: string }).error, 'invalid_client')
    }
    const noJti = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(`${service.url}/token`)
      .setExpirationTime('60s')
      .sign(keys.privateKey)
    assert.equal((await token({ client_assertion_type: JWT_BEARER, client_assertion: noJti })).status, 401)
    const wrongType = await token({ client_assertion_type: 'urn:x', client_assertion: await assertion() })
    assert.equal(wrongType.status, 400)
    const secret = await token({ client_id: clientId, client_secret: 'anything' })
    assert.equal(secret.status, 401, 'the client registered keys, not a secret')
    const both = await token({
      client_secret: 'x',
      client_assertion_type: JWT_BEARER,
      client_assertion: await assertion(),
    })
    assert.equal(both.status, 400)
  })

  it('refuses registrations with private keys, bad keys or keys without the method', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true })
    for (const body of [
      { token_endpoint_auth_method: 'private_key_jwt' },
      { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [await exportJWK(privateKey)] } },
      {
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA' }] },
      },
      {
        token_endpoint_auth_method: 'client_secret_basic',
        jwks: { keys: [await exportJWK(keys.publicKey)] },
      },
    ]) {
      const res = await register(body)
      assert.equal(res.status, 400, JSON.stringify(body))
      assert.equal(res.body.error, 'invalid_client_metadata')
    }
  })
})
