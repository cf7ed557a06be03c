import { randomBytes } from 'node:crypto'
import { AppError } from '@svc/kit'
import type { IdpTables } from '../../db.ts'
import { parseScope, SCOPES } from '../../oauth/scopes.ts'
import type { GrantDeps } from './grants.ts'
import { ACCESS_TOKEN_TTL_S } from './tokens.ts'

/** Scopes about a user: a client acting for itself has none to ask for. */
const USER_SCOPES = new Set<string>([...SCOPES, 'organization'])
/** RFC 6749 §3.3: scope-token = 1*NQCHAR. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

/**
 * RFC 6749 §4.4: a confidential client's token for itself (`sub` = `client_id`, no refresh token),
 * for its own use or, with `audience`, for another registered client. The access token is an
 * RFC 9068 JWT like every other.
 */
export async function clientCredentialsGrant(
  deps: GrantDeps,
  client: Pick<IdpTables['clients'], 'client_id' | 'client_type'>,
  body: { scope?: string; audience?: string; resource?: string },
) {
  if (client.client_type !== 'confidential')
    throw new AppError(400, 'unauthorized_client', 'client_credentials is for confidential clients')
  const scopes = parseScope(body.scope)
  const malformed = scopes.find((s) => !SCOPE_TOKEN.test(s))
  if (malformed)
    throw new AppError(400, 'invalid_scope', `"${malformed}" is not a scope token (RFC 6749 §3.3)`)
  const userScopes = scopes.filter((s) => USER_SCOPES.has(s))
  if (userScopes.length)
    throw new AppError(
      400,
      'invalid_scope',
      `scopes about a user cannot be granted to a client: ${userScopes.join(' ')}`,
    )
  if (body.resource !== undefined)
    throw new AppError(400, 'invalid_target', `no resource ${body.resource} is registered`)
  let audience = client.client_id
  if (body.audience !== undefined) {
    const target = await deps.db
      .selectFrom('clients')
      .select('client_id')
      .where('client_id', '=', body.audience)
      .executeTakeFirst()
    if (!target)
      throw new AppError(400, 'invalid_target', `audience ${body.audience} is not a registered client`)
    audience = target.client_id
  }
  const now = Math.floor(Date.now() / 1000)
  const accessToken = await deps.keys.sign(
    {
      iss: deps.issuer,
      sub: client.client_id,
      aud: audience,
      client_id: client.client_id,
      ...(scopes.length ? { scope: scopes.join(' ') } : {}),
      jti: randomBytes(16).toString('base64url'),
      iat: now,
      exp: now + ACCESS_TOKEN_TTL_S,
    },
    'RS256',
    'at+jwt',
  )
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_S,
    ...(scopes.length ? { scope: scopes.join(' ') } : {}),
  }
}
