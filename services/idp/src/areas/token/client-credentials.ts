import type { IdpTables } from '../../db.ts'
import { parseScope, SCOPE_TOKEN, SCOPES } from '../../oauth/scopes.ts'
import { targetResource } from '../resources/index.ts'
import type { GrantDeps } from './grants.ts'
import { ACCESS_TOKEN_TTL_S, agentClaims, signAccessToken, tokenType } from './tokens.ts'
import { idpError } from '../../errors.ts'

/** Scopes about a user: a client acting for itself has none to ask for. */
const USER_SCOPES = new Set<string>([...SCOPES, 'organization'])

/**
 * RFC 6749 §4.4: a confidential client's token for itself (`sub` = `client_id`, no refresh token),
 * for its own use, for another registered client (`audience`) or for a registered resource
 * (`resource`, RFC 8707, whose declared scopes bound the asked ones). The access token is an
 * RFC 9068 JWT like every other.
 */
export async function clientCredentialsGrant(
  deps: GrantDeps,
  client: Pick<IdpTables['clients'], 'client_id' | 'client_type' | 'agent_model' | 'workload'>,
  body: { scope?: string; audience?: string; resource?: string },
  jkt?: string,
) {
  if (client.client_type !== 'confidential')
    throw idpError('unauthorized_client', 'client_credentials is for confidential clients')
  const scopes = parseScope(body.scope)
  const malformed = scopes.find((s) => !SCOPE_TOKEN.test(s))
  if (malformed) throw idpError('invalid_scope', `"${malformed}" is not a scope token (RFC 6749 §3.3)`)
  const userScopes = scopes.filter((s) => USER_SCOPES.has(s))
  if (userScopes.length)
    throw idpError(
      'invalid_scope',
      `scopes about a user cannot be granted to a client: ${userScopes.join(' ')}`,
    )
  const resource = await targetResource(deps.db, body.resource)
  if (resource && body.audience !== undefined)
    throw idpError('invalid_request', 'ask for a resource or an audience, not both')
  const foreign = resource?.scopes.length ? scopes.filter((s) => !resource.scopes.includes(s)) : []
  if (foreign.length)
    throw idpError('invalid_scope', `${resource!.identifier} has no scope ${foreign.join(' ')}`)
  let audience = resource?.identifier ?? client.client_id
  if (body.audience !== undefined) {
    const target = await deps.clients.live(deps.db, body.audience, ['client_id'])
    if (!target) throw idpError('invalid_target', `audience ${body.audience} is not a registered client`)
    audience = target.client_id
  }
  const accessToken = await signAccessToken(
    deps.keys,
    {
      iss: deps.issuer,
      sub: client.client_id,
      aud: audience,
      client_id: client.client_id,
      ...(scopes.length ? { scope: scopes.join(' ') } : {}),
      ...agentClaims(client),
    },
    jkt,
  )
  return {
    access_token: accessToken,
    token_type: tokenType(jkt),
    expires_in: ACCESS_TOKEN_TTL_S,
    ...(scopes.length ? { scope: scopes.join(' ') } : {}),
  }
}
