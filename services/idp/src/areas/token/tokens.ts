import { createHash, randomBytes } from 'node:crypto'
import type { IdpTables } from '../../db.ts'
import { subjectFor } from '../../oauth/subject.ts'
import type { SigningKeys } from '../keys/service.ts'
import { type TaskClaim, taskClaim } from '../tasks/index.ts'
import type { TaskRow } from '../tasks/service.ts'

export const ACCESS_TOKEN_TTL_S = 600
export const ID_TOKEN_TTL_S = 600

export interface Grant {
  user_id: string
  sid: string
  scope: string[]
  nonce: string | null
  auth_time: Date
  acr: string
  amr: string[]
  /** The RFC 8707 resource the access token is for; its audience is the client otherwise. */
  resource: string | null
  task_id: string | null
}

/** RFC 9449 §6: a token bound to a DPoP key is of type DPoP. */
export const tokenType = (jkt: string | undefined) => (jkt ? 'DPoP' : 'Bearer')

/** RFC 8693 §4.1: who acts for the subject, with whoever acted before it nested inside. */
export interface Actor {
  sub: string
  act?: Actor
}

export interface AccessClaims {
  iss: string
  sub: string
  aud: string
  client_id: string
  scope?: string
  sid?: string
  /** RFC 9068 §2.2.1: how and when the user signed in, so a resource server can ask for step-up (RFC 9470). */
  acr?: string
  auth_time?: number
  act?: Actor
  tsk?: TaskClaim
  /** Agent-to-agent login: both organizations screened each other (leaf hashes of the two receipts). */
  kya?: { ok: true; screened: string[]; mutual: true }
  /** What the operator declared about the model behind the agent (never verified by us). */
  agent?: { model: string; version?: string; provider?: string; declared_by: 'operator' }
  /** The workload identity the client proved it runs as. */
  workload?: { scheme: string; external_id: string; issuer: string }
  /** A credential access token (OpenID4VCI): the configurations its offer named. */
  credential_configuration_ids?: string[]
  /** The `client_id` a wallet named itself by when it redeemed an offer (unauthenticated). */
  wallet_client_id?: string
}

/** The claims about the agent a client is, for tokens whose subject is the client itself. */
export const agentClaims = (client: Pick<IdpTables['clients'], 'agent_model' | 'workload'>) => ({
  ...(client.agent_model ? { agent: { ...client.agent_model, declared_by: 'operator' as const } } : {}),
  ...(client.workload
    ? {
        workload: {
          scheme: client.workload.scheme,
          external_id: client.workload.external_id,
          issuer: client.workload.issuer,
        },
      }
    : {}),
})

/** An access token's `jti`, chosen before signing when the grant must remember it. */
export const newJti = () => randomBytes(16).toString('base64url')

/**
 * Every access token: an RFC 9068 JWT (typ at+jwt) lasting 600 s, or less when what it derives
 * from ends sooner (`notAfter`, seconds), with its own `jti`, and when bound to a DPoP key its
 * thumbprint in `cnf.jkt` (RFC 9449 §6).
 */
export function signAccessToken(
  keys: SigningKeys,
  claims: AccessClaims,
  jkt: string | undefined,
  notAfter = Infinity,
  jti = newJti(),
) {
  const now = Math.floor(Date.now() / 1000)
  return keys.sign(
    {
      ...claims,
      jti,
      iat: now,
      exp: Math.min(now + ACCESS_TOKEN_TTL_S, notAfter),
      ...(jkt ? { cnf: { jkt } } : {}),
    },
    'RS256',
    'at+jwt',
  )
}

/** OpenID Connect Core §3.1.3.6: the left half of SHA-256 of the access token, base64url. */
export const atHash = (accessToken: string) =>
  createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url')

/**
 * The token response for a user grant: an RFC 9068 JWT access token and an ID token, both signed
 * RS256. Under a task grant the access token carries `tsk` and ends with the grant at the latest.
 */
export async function issueTokens(
  { keys, issuer, pairwiseSalt }: { keys: SigningKeys; issuer: string; pairwiseSalt: string },
  client: Pick<IdpTables['clients'], 'client_id' | 'subject_type' | 'redirect_uris' | 'organization_id'>,
  grant: Grant,
  jkt?: string,
  task?: TaskRow,
  idClaims: Record<string, unknown> = {},
  accessJti = newJti(),
) {
  const now = Math.floor(Date.now() / 1000)
  const sub = subjectFor(client, grant.user_id, pairwiseSalt)
  const scope = grant.scope.join(' ')
  const tsk = task ? taskClaim(task) : undefined
  const accessToken = await signAccessToken(
    keys,
    {
      iss: issuer,
      sub,
      aud: grant.resource ?? client.client_id,
      client_id: client.client_id,
      scope,
      sid: grant.sid,
      acr: grant.acr,
      auth_time: Math.floor(grant.auth_time.getTime() / 1000),
      ...(tsk ? { tsk } : {}),
    },
    jkt,
    tsk?.exp,
    accessJti,
  )
  const idToken = await keys.sign({
    iss: issuer,
    sub,
    aud: client.client_id,
    iat: now,
    exp: now + ID_TOKEN_TTL_S,
    auth_time: Math.floor(grant.auth_time.getTime() / 1000),
    ...(grant.nonce ? { nonce: grant.nonce } : {}),
    acr: grant.acr,
    amr: grant.amr,
    sid: grant.sid,
    at_hash: atHash(accessToken),
    ...idClaims,
  })
  return {
    access_token: accessToken,
    token_type: tokenType(jkt),
    expires_in: ACCESS_TOKEN_TTL_S,
    id_token: idToken,
    scope,
  }
}
