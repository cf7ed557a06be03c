import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, createClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://rp.example.com/callback'

describe('client authentication: a client holding a secret may send it in the header or the body', () => {
  let service: RunningService<IdpConfig>

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
  })
  after(async () => service.close())

  /** A relying party configured by discovery, authenticating as told (openid-client's default: the body). */
  const relyingParty = async (metadata: Record<string, unknown>, auth?: 'basic' | 'post') => {
    const created = await createClient(service, { redirect_uris: [CALLBACK], ...metadata })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    const secret = created.body.client_secret as string
    const method =
      auth === 'basic'
        ? oidc.ClientSecretBasic(secret)
        : auth === 'post'
          ? oidc.ClientSecretPost(secret)
          : undefined
    const config = await oidc.discovery(
      new URL(service.url),
      created.body.client_id as string,
      secret,
      method,
      {
        execute: [oidc.allowInsecureRequests],
      },
    )
    return { config, registered: created.body.token_endpoint_auth_method as string }
  }

  /** Everything a confidential client authenticates for: /token, /introspect, /revoke and /par. */
  async function everyEndpoint(config: oidc.Configuration) {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'jobs:read' })
    assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, true)
    const verifier = oidc.randomPKCECodeVerifier()
    const pushed = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: CALLBACK,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    assert.match(pushed.searchParams.get('request_uri')!, /^urn:ietf:params:oauth:request_uri:/)
    await oidc.tokenRevocation(config, tokens.access_token)
    assert.equal((await oidc.tokenIntrospection(config, tokens.access_token)).active, false)
  }

  it('accepts a client of the admin API with openid-client’s defaults (the secret in the body)', async () => {
    const rp = await relyingParty({ client_name: 'Default RP' })
    assert.equal(rp.registered, 'client_secret_basic')
    await everyEndpoint(rp.config)
  })

  it('accepts HTTP Basic from the same client, and Basic from a client registered for the body', async () => {
    await everyEndpoint((await relyingParty({ client_name: 'Basic RP' }, 'basic')).config)
    const post = await relyingParty(
      { client_name: 'Post RP', token_endpoint_auth_method: 'client_secret_post' },
      'basic',
    )
    assert.equal(post.registered, 'client_secret_post')
    await everyEndpoint(post.config)
  })

  it('still refuses a wrong secret either way, and advertises what it accepts', async () => {
    const created = await createClient(service, { client_name: 'Wrong', redirect_uris: [CALLBACK] })
    const id = created.body.client_id as string
    for (const auth of [oidc.ClientSecretPost('wrong'), oidc.ClientSecretBasic('wrong')]) {
      const config = await oidc.discovery(new URL(service.url), id, 'wrong', auth, {
        execute: [oidc.allowInsecureRequests],
      })
      await assert.rejects(
        oidc.clientCredentialsGrant(config, { scope: 'jobs:read' }),
        // invalid_client in the body, or for Basic a 401 with a Basic challenge (RFC 6749 §5.2)
        (err: Error & { status?: number }) => err.status === 401,
      )
    }
    const metadata = (
      await oidc.discovery(new URL(service.url), id, undefined, undefined, {
        execute: [oidc.allowInsecureRequests],
      })
    ).serverMetadata()
    for (const supported of [
      metadata.token_endpoint_auth_methods_supported,
      metadata.introspection_endpoint_auth_methods_supported,
      metadata.revocation_endpoint_auth_methods_supported,
    ])
      assert.deepEqual(supported, ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'])
  })
})
