import { type Kv } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose'
import type { Selectable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'
import { challenge } from '../../oauth/challenge.ts'
import { cachedClientRow } from './cache.ts'
import { secretMatches } from './service.ts'
import { idpError } from '../../errors.ts'

export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
/** The algorithms a client assertion may use (discovery: token_endpoint_auth_signing_alg_values_supported). */
export const ASSERTION_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA']
/** An assertion may live at most this long: its jti is remembered until it expires. */
const MAX_ASSERTION_LIFETIME_S = 300
/** The secret methods, each accepted from every client that holds a secret (discovery lists both). */
export const SECRET_METHODS = ['client_secret_basic', 'client_secret_post']

export interface ClientAuthDeps {
  db: IdpDb
  kv: Kv
  issuer: string
}

export interface ClientCredentials {
  client_id?: string
  client_secret?: string
  client_assertion?: string
  client_assertion_type?: string
}

const invalidClient = (message: string, basic: boolean) =>
  idpError(
    'invalid_client',
    message,
    basic ? { 'www-authenticate': challenge('Basic', { realm: 'token' }) } : {},
  )

/**
 * RFC 7523 §2.2 and §3 (OpenID Connect Core §9): a JWT signed with one of the client's registered
 * keys, `iss` = `sub` = `client_id`, `aud` the issuer or the endpoint, an `exp` at most five
 * minutes ahead, and a `jti` never seen before (kept in the kv, shared through Redis).
 */
async function assertedClient(deps: ClientAuthDeps, request: FastifyRequest, body: ClientCredentials) {
  if (body.client_assertion_type !== JWT_BEARER)
    throw idpError('invalid_request', `client_assertion_type must be ${JWT_BEARER}`)
  let clientId: unknown
  try {
    clientId = decodeJwt(body.client_assertion!).iss
  } catch {
    throw invalidClient('client_assertion is not a JWT', false)
  }
  if (typeof clientId !== 'string' || (body.client_id !== undefined && body.client_id !== clientId))
    throw invalidClient('client_assertion must be issued by the client_id', false)
  const client = await cachedClientRow(deps.db, clientId)
  if (!client || client.token_endpoint_auth_method !== 'private_key_jwt' || !client.jwks)
    throw invalidClient('client authentication failed', false)
  const endpoint = `${deps.issuer}${request.url.split('?')[0]}`
  let payload
  try {
    ;({ payload } = await jwtVerify(body.client_assertion!, createLocalJWKSet(client.jwks as never), {
      issuer: clientId,
      subject: clientId,
      audience: [deps.issuer, endpoint, `${deps.issuer}/token`],
      algorithms: ASSERTION_ALGS,
      requiredClaims: ['exp', 'jti'],
      clockTolerance: 30,
    }))
  } catch (err) {
    throw invalidClient(`client_assertion refused: ${(err as Error).message}`, false)
  }
  const now = Math.floor(Date.now() / 1000)
  if (payload.exp! > now + MAX_ASSERTION_LIFETIME_S)
    throw invalidClient(`client_assertion must expire within ${MAX_ASSERTION_LIFETIME_S} s`, false)
  const ttlMs = Math.max(1, payload.exp! - now + 30) * 1000
  if (!(await deps.kv.setIfAbsent(`assertion-jti:${clientId}:${payload.jti}`, '1', ttlMs)))
    throw invalidClient('client_assertion was already used (jti replayed)', false)
  return client
}

/**
 * Client authentication (RFC 6749 §2.3): HTTP Basic with the form-encoded id and secret, or both
 * in the body, or a signed assertion (private_key_jwt), or for public clients the client_id alone.
 * A client holding a secret may send it either way, whichever `token_endpoint_auth_method` it
 * registered (as Keycloak does; a standard relying party such as openid-client sends it in the
 * body by default); a client registered for keys or for none cannot use a secret. Using two
 * methods at once is refused.
 */
export async function authenticateClient(
  deps: ClientAuthDeps,
  request: FastifyRequest,
  body: ClientCredentials,
): Promise<Readonly<Selectable<IdpTables['clients']>>> {
  const header = request.headers.authorization
  const methods = [
    header?.startsWith('Basic '),
    body.client_secret !== undefined,
    body.client_assertion !== undefined,
  ]
  if (methods.filter(Boolean).length > 1)
    throw idpError('invalid_request', 'use one client authentication method')
  if (body.client_assertion !== undefined) return assertedClient(deps, request, body)
  let clientId: string | undefined
  let secret: string | undefined
  let method: 'client_secret_basic' | 'client_secret_post' | 'none'
  if (header?.startsWith('Basic ')) {
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8')
    const at = decoded.indexOf(':')
    if (at < 0) throw invalidClient('malformed Basic credentials', true)
    try {
      clientId = decodeURIComponent(decoded.slice(0, at).replace(/\+/g, ' '))
      secret = decodeURIComponent(decoded.slice(at + 1).replace(/\+/g, ' '))
    } catch {
      throw invalidClient('malformed Basic credentials', true)
    }
    if (body.client_id !== undefined && body.client_id !== clientId)
      throw idpError('invalid_request', 'client_id differs from the authenticated client')
    method = 'client_secret_basic'
  } else if (body.client_secret !== undefined) {
    clientId = body.client_id
    secret = body.client_secret
    method = 'client_secret_post'
  } else {
    clientId = body.client_id
    method = 'none'
  }
  if (!clientId) throw invalidClient('client authentication is required', false)
  const accepts = (client: { token_endpoint_auth_method: string; client_secret_hash: Buffer | null }) =>
    method === 'none'
      ? client.token_endpoint_auth_method === 'none'
      : SECRET_METHODS.includes(client.token_endpoint_auth_method) &&
        secretMatches(client.client_secret_hash, secret ?? '')
  let client = await cachedClientRow(deps.db, clientId)
  // the kept row may predate a secret rotated on another instance: a refusal reads it again
  if (client && !accepts(client)) client = await cachedClientRow(deps.db, clientId, { fresh: true })
  if (!client || !accepts(client))
    throw invalidClient('client authentication failed', method === 'client_secret_basic')
  return client
}
