import type { IdpTables } from '../../db.ts'
import { parseScope } from '../../oauth/scopes.ts'
import { type ScreeningDeps, screenAgent } from '../orgs/index.ts'
import type { GrantDeps } from './grants.ts'
import { ACCESS_TOKEN_TTL_S, agentClaims, signAccessToken, tokenType } from './tokens.ts'
import { idpError } from '../../errors.ts'

type Client = Pick<IdpTables['clients'], 'client_id' | 'organization_id' | 'agent_model' | 'workload'>
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'

const invalidGrant = (message: string) => idpError('invalid_grant', message)

/** A live client and its organization, both needed for agent-to-agent login. */
async function withOrganization(deps: GrantDeps, clientId: string | undefined, role: string) {
  const client = clientId
    ? await deps.clients.live(deps.db, clientId, ['client_id', 'organization_id'])
    : undefined
  const org = client?.organization_id ? await deps.orgs.byId(deps.db, client.organization_id) : undefined
  if (!client || !org)
    throw idpError('invalid_target', `agent-to-agent login needs the ${role} to be an organization’s client`)
  return { client, org }
}

/**
 * Agent-to-agent login (identity-provider.md, /token grants): a client presents its own
 * client-credentials token and names another organization's client as `audience`. Each
 * organization screens the other's agent against its deny list, both decisions receipted as
 * `kya.screening`; a hit on either side refuses. The token is the requester's (`sub`), for the
 * audience, with `kya {ok, screened, mutual: true}` where `screened` holds the two receipts' leaf
 * hashes (the audience's screening first); no `act`, no `sid`, no refresh token.
 */
export async function agentExchange(
  deps: GrantDeps & { screening: ScreeningDeps },
  caller: Client,
  subject: Record<string, unknown>,
  body: { audience?: string; scope?: string },
  jkt: string | undefined,
) {
  if (subject.sub !== caller.client_id)
    throw invalidGrant('an agent’s subject_token must be its own client-credentials token')
  const requester = await withOrganization(deps, caller.client_id, 'requester')
  const target = await withOrganization(deps, body.audience, 'audience')
  if (requester.org.id === target.org.id)
    throw idpError('invalid_target', 'agent-to-agent login is between two organizations')

  const held = parseScope(subject.scope as string | undefined)
  const scope = body.scope === undefined ? held : parseScope(body.scope)
  const beyond = scope.filter((s) => !held.includes(s))
  if (beyond.length) throw idpError('invalid_scope', `scope beyond the subject_token’s: ${beyond.join(' ')}`)

  const byAudience = await screenAgent(deps.screening, target.org, {
    did: requester.org.did,
    owner: requester.org.id,
    client_id: requester.client.client_id,
  })
  const byRequester = await screenAgent(deps.screening, requester.org, {
    did: target.org.did,
    owner: target.org.id,
    client_id: target.client.client_id,
  })
  if (!byAudience.ok) throw invalidGrant('the audience’s organization refuses this agent')
  if (!byRequester.ok) throw invalidGrant('this agent’s organization refuses the audience')

  const accessToken = await signAccessToken(
    deps.keys,
    {
      iss: deps.issuer,
      sub: caller.client_id,
      aud: target.client.client_id,
      client_id: caller.client_id,
      ...(scope.length ? { scope: scope.join(' ') } : {}),
      kya: { ok: true, screened: [byAudience.receipt, byRequester.receipt], mutual: true },
      ...agentClaims(caller),
    },
    jkt,
    subject.exp as number,
  )
  return exchangeResponse(accessToken, jkt, subject.exp as number, scope)
}

/** RFC 8693 §2.2.1: an access token, never outliving the subject token, and no refresh token. */
export const exchangeResponse = (
  accessToken: string,
  jkt: string | undefined,
  notAfter: number,
  scope: string[],
) => ({
  access_token: accessToken,
  issued_token_type: ACCESS_TOKEN_TYPE,
  token_type: tokenType(jkt),
  expires_in: Math.min(ACCESS_TOKEN_TTL_S, notAfter - Math.floor(Date.now() / 1000)),
  ...(scope.length ? { scope: scope.join(' ') } : {}),
})
