import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { type JsonResponse, testEnv } from '@svc/kit/testing'
import { decodeJwt, exportJWK, generateKeyPair, type GenerateKeyPairResult, SignJWT } from 'jose'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { fetchPublic } from '../../src/outbound.ts'
import { asOrg, signUpOrg } from '@svc/testing/idp-orgs'
import { ADMIN } from '@svc/testing/idp-flow'

const SPIFFE_ID = 'spiffe://example.org/ns/agents/sa/shopper'
const SPIRE = 'https://spire.example.org'

describe('agent clients: DID, declared model and workload binding', () => {
  let service: RunningService<IdpConfig>
  let jwksServer: Server
  let jwksUri: string
  let spire: GenerateKeyPairResult
  let key: string
  let client: { client_id: string; client_secret: string; did: string }
  let config: oidc.Configuration

  const orgCall = (method: string, path: string, body?: unknown, apiKey = key) =>
    asOrg(service, apiKey)(method, path, body)
  const signUp = async (name: string) => (await signUpOrg(service, name)).api_key
  /** A JWT-SVID as SPIRE would mint it, with claims to override. */
  const svid = (claims: Record<string, unknown> = {}, audience = service.url) =>
    new SignJWT({ iss: SPIRE, sub: SPIFFE_ID, aud: audience, did: client.did, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'spire-1' })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(spire.privateKey)
  const bind = async (token: string, extra: Record<string, unknown> = {}, apiKey = key) =>
    orgCall(
      'POST',
      `/orgs/clients/${client.client_id}/workload-binding`,
      { scheme: 'spiffe', external_id: SPIFFE_ID, issuer: SPIRE, jwks_uri: jwksUri, token, ...extra },
      apiKey,
    )
  const refused = (res: JsonResponse, status: number) =>
    assert.equal(res.status, status, JSON.stringify(res.body))

  before(async () => {
    spire = await generateKeyPair('ES256')
    const jwk = { ...(await exportJWK(spire.publicKey)), kid: 'spire-1', alg: 'ES256' }
    jwksServer = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
    )
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve))
    jwksUri = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/keys`
    service = await startService(
      idp,
      testEnv({
        IDP_ADMIN_TOKEN: ADMIN,
        IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
        IDP_TOKEN_RATE_PER_MIN_IP: '0',
        IDP_FETCH_ALLOW_PRIVATE: 'true',
      }),
      { fresh: true },
    )
    key = await signUp('shopper')
    client = (
      await orgCall('POST', '/orgs/clients', {
        client_name: 'Shopper',
        client_type: 'confidential',
        redirect_uris: ['https://shopper.example.com/callback'],
      })
    ).body as typeof client
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
    jwksServer.close()
  })

  it('gives every client a did:key', () => {
    assert.match(client.did, /^did:key:z6Mk/)
  })

  it('shows the declared model as agent, labelled declared_by operator', async () => {
    const declared = await orgCall('PUT', `/orgs/clients/${client.client_id}/agent-model`, {
      model: 'gpt-5',
      version: '2026-10',
      provider: 'OpenAI',
    })
    assert.equal(declared.status, 200)
    assert.deepEqual(declared.body.agent_model, { model: 'gpt-5', version: '2026-10', provider: 'OpenAI' })
    const tokens = await oidc.clientCredentialsGrant(config, {})
    const agent = { model: 'gpt-5', version: '2026-10', provider: 'OpenAI', declared_by: 'operator' }
    assert.deepEqual(decodeJwt(tokens.access_token).agent, agent)
    assert.deepEqual((await oidc.tokenIntrospection(config, tokens.access_token)).agent, agent)
    refused(await orgCall('PUT', `/orgs/clients/${client.client_id}/agent-model`, { version: '1' }), 400)
    refused(
      await orgCall(
        'PUT',
        `/orgs/clients/${client.client_id}/agent-model`,
        { model: 'x' },
        await signUp('rival'),
      ),
      404,
    )
  })

  it('binds the workload a SPIFFE JWT-SVID proves, carrying the client’s DID, and shows it in the client’s tokens', async () => {
    refused(await bind(await svid({ did: 'did:key:z6MkSomeoneElse' })), 400)
    refused(await bind(await svid({ sub: 'spiffe://example.org/other' })), 400)
    refused(await bind(await svid({}, 'https://another-idp.example.com')), 400)
    refused(await bind(await svid(), { external_id: 'not-a-spiffe-id' }), 400)
    refused(await bind(await svid(), { issuer: 'https://other-spire.example.org' }), 400)
    refused(await bind(await svid(), {}, await signUp('intruder')), 404)

    const bound = await bind(await svid())
    assert.equal(bound.status, 200, JSON.stringify(bound.body))
    assert.equal((bound.body.workload as { external_id: string }).external_id, SPIFFE_ID)
    const tokens = await oidc.clientCredentialsGrant(config, {})
    assert.deepEqual(decodeJwt(tokens.access_token).workload, {
      scheme: 'spiffe',
      external_id: SPIFFE_ID,
      issuer: SPIRE,
    })
  })

  it('fetches URLs given by callers only over https, from public addresses', async () => {
    const refusal = async (url: string) => {
      try {
        await fetchPublic(url, { allowPrivate: false })
      } catch (err) {
        return (err as Error).message
      }
      throw new Error('fetched')
    }
    assert.match(await refusal(jwksUri), /must be https/)
    assert.match(await refusal('https://127.0.0.1/keys'), /not a public address/)
    assert.match(await refusal('https://[::1]/keys'), /not a public address/)
    assert.match(await refusal('https://10.1.2.3/keys'), /not a public address/)
    assert.match(await refusal('https://169.254.169.254/latest/meta-data'), /not a public address/)
  })
})
