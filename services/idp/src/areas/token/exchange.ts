import { AppError, type Kv } from '@svc/kit'
import type { IdpTables } from '../../db.ts'
import { parseScope } from '../../oauth/scopes.ts'
import { subjectFor } from '../../oauth/subject.ts'
import { tokenHolder } from './holder.ts'
import { targetResource } from '../resources/index.ts'
import type { ScreeningDeps } from '../orgs/screening.ts'
import { isDenied } from '../../oauth/denylist.ts'
import { spendTask, taskClaim } from '../tasks/index.ts'
import { ACCESS_TOKEN_TYPE, agentExchange, exchangeResponse } from './agent-exchange.ts'
import type { GrantDeps } from './grants.ts'
import { type Actor, signAccessToken } from './tokens.ts'
import { idpError } from '../../errors.ts'

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'

type Client = Pick<
  IdpTables['clients'],
  'client_id' | 'client_type' | 'organization_id' | 'agent_model' | 'workload'
>
export interface ExchangeRequest {
  subject_token?: string
  subject_token_type?: string
  actor_token?: string
  actor_token_type?: string
  requested_token_type?: string
  audience?: string
  resource?: string
  scope?: string
}

const invalidGrant = (message: string) => idpError('invalid_grant', message)

/** One of our live access tokens, verified, not revoked; a refusal names which token failed. */
async function liveToken(deps: GrantDeps & { kv: Kv }, token: string, name: string) {
  let payload: Record<string, unknown>
  try {
    payload = (await deps.keys.verify(token, { issuer: deps.issuer, typ: 'at+jwt' })).payload
  } catch {
    throw invalidGrant(`${name} is not a valid access token of this issuer, or it has expired`)
  }
  if (await isDenied(deps.kv, payload.jti)) throw invalidGrant(`${name} was revoked`)
  return payload
}

async function audienceClient(deps: GrantDeps, clientId: string) {
  const client = await deps.clients.live(deps.db, clientId, [
    'client_id',
    'subject_type',
    'redirect_uris',
    'organization_id',
  ])
  if (!client) throw idpError('invalid_target', `audience ${clientId} is not a registered client`)
  return client
}

/** The audience's organization may refuse the acting client: by its client_id, or its organization's DID or id. */
async function refusesActor(deps: GrantDeps, audienceOrg: string | null, actor: Client) {
  const org = audienceOrg ? await deps.orgs.byId(deps.db, audienceOrg) : undefined
  if (!org?.agent_deny_list.length) return false
  const actorOrg = actor.organization_id ? await deps.orgs.byId(deps.db, actor.organization_id) : undefined
  const names = [actor.client_id, actorOrg?.did, actorOrg?.id]
  return org.agent_deny_list.some((entry) => names.includes(entry))
}

/** A token is the caller's when the caller obtained it (`client_id`) or it was made for the caller (`aud`). */
function issuedTo(token: Record<string, unknown>, clientId: string) {
  const audience = Array.isArray(token.aud) ? token.aud : [token.aud]
  return token.client_id === clientId || audience.includes(clientId)
}

function checkTypes(body: ExchangeRequest) {
  if (!body.subject_token || !body.subject_token_type)
    throw idpError('invalid_request', 'subject_token and subject_token_type are required')
  if (body.subject_token_type !== ACCESS_TOKEN_TYPE)
    throw idpError('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}`)
  if ((body.actor_token === undefined) !== (body.actor_token_type === undefined))
    throw idpError('invalid_request', 'actor_token and actor_token_type go together (RFC 8693 §2.1)')
  if (body.actor_token_type !== undefined && body.actor_token_type !== ACCESS_TOKEN_TYPE)
    throw idpError('invalid_request', `actor_token_type must be ${ACCESS_TOKEN_TYPE}`)
  if (body.requested_token_type !== undefined && body.requested_token_type !== ACCESS_TOKEN_TYPE)
    throw idpError('invalid_request', `only ${ACCESS_TOKEN_TYPE} can be requested`)
  if (body.audience !== undefined && body.resource !== undefined)
    throw idpError('invalid_request', 'ask for a resource or an audience, not both')
}

/**
 * RFC 8693 delegation: a confidential client holding a user's access token (one it obtained, or
 * one made for it) gets one for another client (`audience`) or a registered resource, acting for
 * the user: `act.sub` names the caller, with the subject token's own `act` nested inside on
 * re-exchange, so the innermost actor is the client the user authorized. The token carries the
 * audience's view of the user (its pairwise `sub`) and the original `sid`, so it dies with the
 * session or the user's consent to the caller; it never outlives the subject token and comes with
 * no refresh token. An `actor_token`, when sent, must be the caller's own client-credentials token.
 */
export async function tokenExchangeGrant(
  deps: GrantDeps & { kv: Kv; screening: ScreeningDeps },
  client: Client,
  body: ExchangeRequest,
  jkt?: string,
) {
  if (client.client_type !== 'confidential')
    throw idpError('unauthorized_client', 'token exchange is for confidential clients')
  checkTypes(body)
  const subject = await liveToken(deps, body.subject_token!, 'subject_token')
  if (!issuedTo(subject, client.client_id)) throw invalidGrant('subject_token was not issued to this client')
  const subjectJkt = (subject.cnf as { jkt?: string } | undefined)?.jkt
  if (subjectJkt && subjectJkt !== jkt)
    throw invalidGrant('subject_token is bound to a DPoP key: prove possession of that key')
  if (typeof subject.sid !== 'string') return agentExchange(deps, client, subject, body, jkt)
  if (body.actor_token !== undefined) {
    const actor = await liveToken(deps, body.actor_token, 'actor_token')
    if (actor.sub !== client.client_id || actor.client_id !== client.client_id || actor.sid !== undefined)
      throw invalidGrant('actor_token must be this client’s own client-credentials token')
  }
  const holder = await tokenHolder(deps, subject)
  if (!holder) throw invalidGrant('the subject_token’s session has ended or its consent was withdrawn')

  const held = parseScope(subject.scope as string | undefined)
  const scope = body.scope === undefined ? held : parseScope(body.scope)
  const beyond = scope.filter((s) => !held.includes(s))
  if (beyond.length) throw idpError('invalid_scope', `scope beyond the subject_token’s: ${beyond.join(' ')}`)
  const resource = await targetResource(deps.db, body.resource)
  const audience = await audienceClient(deps, body.audience ?? client.client_id)
  if (await refusesActor(deps, audience.organization_id, client))
    throw invalidGrant('the audience’s organization refuses this client as an actor')
  // a token under a task grant spends a use of it for each token derived from it
  const taskId = (subject.tsk as { id?: string } | undefined)?.id
  const task = taskId ? await spendTask(deps.db, taskId) : undefined
  if (task instanceof AppError) throw task
  const act: Actor = subject.act
    ? { sub: client.client_id, act: subject.act as Actor }
    : { sub: client.client_id }

  const accessToken = await signAccessToken(
    deps.keys,
    {
      iss: deps.issuer,
      sub: subjectFor(audience, holder.user.id, deps.pairwiseSalt),
      aud: resource?.identifier ?? audience.client_id,
      client_id: client.client_id,
      scope: scope.join(' '),
      sid: subject.sid,
      act,
      ...(task ? { tsk: taskClaim(task) } : {}),
    },
    jkt,
    subject.exp as number,
  )
  return exchangeResponse(accessToken, jkt, subject.exp as number, scope)
}
