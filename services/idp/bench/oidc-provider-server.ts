/**
 * oidc-provider (npm, the certified OpenID provider for Node.js) set up like our idp for the
 * /token comparison in idp.bench.ts, run in its own process:
 *   one confidential client authenticating with client_secret_basic; PKCE S256; refresh tokens
 *   only with offline_access and rotated on every use; client_credentials; DPoP with server
 *   nonces required; RS256 ID tokens; RS256 JWT access tokens (through a resource indicator, the
 *   only way it issues JWT access tokens); TTLs as ours.
 * Storage is oidc-provider's own in-memory adapter (no database), over a larger store than its
 * default 1,000 entries, which the benchmark's thousands of codes would overflow.
 *
 * There is no sign-in UI (devInteractions off): a second port mints authorization codes the way
 * its /authorize would after a login and a consent (a Grant, then an AuthorizationCode), for the
 * benchmark to exchange at /token. POST /codes {"challenges": [S256 challenge, …]} → {"codes": […]}.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js'
import LRU from 'oidc-provider/lib/helpers/lru.js'

const env = (name: string) => {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is required`)
  return value
}
const port = Number(env('OIDC_BENCH_PORT'))
const mintPort = Number(env('OIDC_BENCH_MINT_PORT'))
const clientId = env('OIDC_BENCH_CLIENT_ID')
const redirectUri = env('OIDC_BENCH_REDIRECT_URI')
const RESOURCE = 'urn:bench:api'
const ACCOUNT = 'bench-user'

const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true })
const signingKey = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'bench-rs256' }
const store = new LRU({ maxSize: 1_000_000 })

const provider = new Provider(`http://127.0.0.1:${port}`, {
  adapter: (model: string) => new MemoryAdapter(model, store),
  clients: [
    {
      client_id: clientId,
      client_secret: env('OIDC_BENCH_CLIENT_SECRET'),
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
  ],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
  pkce: { required: () => true },
  rotateRefreshToken: true,
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    // ours always wants its nonce in a proof, and remembers each proof's jti
    dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'api',
        audience: RESOURCE,
        accessTokenTTL: 600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  // ours: codes 60 s, access and ID tokens 600 s, refresh tokens 30 days, sessions 12 hours
  ttl: {
    AccessToken: 600,
    AuthorizationCode: 60,
    ClientCredentials: 600,
    Grant: 30 * 86_400,
    IdToken: 600,
    Interaction: 3600,
    RefreshToken: 30 * 86_400,
    Session: 12 * 3600,
  },
})

const server = provider.listen(port, '127.0.0.1')
// the same keep-alive as Fastify's (72 s), so the generator's idle sockets are not closed under it
server.keepAliveTimeout = 72_000

/** What its /authorize leaves behind after a login and a consent: a grant, and a code bound to it. */
async function mintCode(codeChallenge: string): Promise<string> {
  const client = await provider.Client.find(clientId)
  const grant = new provider.Grant({ accountId: ACCOUNT, clientId })
  grant.addOIDCScope('openid offline_access')
  grant.addResourceScope(RESOURCE, 'api')
  const grantId = await grant.save()
  return new provider.AuthorizationCode({
    client,
    grantId,
    accountId: ACCOUNT,
    scope: 'openid offline_access api',
    resource: RESOURCE,
    redirectUri,
    codeChallenge,
    codeChallengeMethod: 'S256',
    authTime: Math.floor(Date.now() / 1000),
    acr: 'urn:bench:pwd',
    amr: ['pwd'],
    sid: randomUUID(),
  }).save()
}

const mint = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    const { challenges } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { challenges: string[] }
    Promise.all(challenges.map(mintCode)).then(
      (codes) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ codes }))
      },
      (err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(err.stack ?? err.message)
      },
    )
  })
})
mint.listen(mintPort, '127.0.0.1')

process.on('SIGTERM', () => {
  server.close()
  mint.close()
  process.exit(0)
})
