import { createHash } from 'node:crypto'
import type { Kv } from '@svc/kit'
import type { IdpDb, IdpTables } from '../../db.ts'
import type { SigningKeys } from '../keys/service.ts'
import type { TokenService } from '../token/index.ts'
import type { ResourcesService } from '../resources/index.ts'
import { denyAccessToken, isDenied } from '../../oauth/denylist.ts'
import { parseScope } from '../../oauth/scopes.ts'

type Client = Pick<IdpTables['clients'], 'client_id' | 'client_type' | 'first_party' | 'redirect_uris'>
export interface TokenDeps {
  db: IdpDb
  kv: Kv
  keys: SigningKeys
  issuer: string
  tokens: TokenService
  resources: ResourcesService
}

const digest = (value: string) => createHash('sha256').update(value).digest()

/** A verified access token of ours, or undefined. */
async function accessToken(deps: TokenDeps, token: string) {
  try {
    return (await deps.keys.verify(token, { issuer: deps.issuer, typ: 'at+jwt' })).payload
  } catch {
    return undefined
  }
}

/**
 * RFC 7009: revokes a token the calling client holds; a refresh token takes its whole family
 * with it. Anything else (unknown, expired, another client's) changes nothing: the answer is 200 either way.
 */
export async function revoke(deps: TokenDeps, client: Client, token: string, hint?: string) {
  const tryRefresh = async () => {
    const row = await deps.tokens.refreshByHash(deps.db, digest(token))
    if (row && row.client_id === client.client_id) await deps.tokens.revokeFamily(deps.db, row.family_id)
    return Boolean(row)
  }
  if (hint === 'refresh_token' && (await tryRefresh())) return
  const payload = token.includes('.') ? await accessToken(deps, token) : undefined
  if (payload) {
    if (
      payload.client_id === client.client_id &&
      typeof payload.jti === 'string' &&
      typeof payload.exp === 'number'
    )
      await denyAccessToken(deps.kv, payload.jti, payload.exp)
    return
  }
  await tryRefresh()
}

/** An http(s) URI's origin, or undefined (a client_id, a private-use scheme's `null` origin). */
const originOf = (uri: unknown) => {
  if (typeof uri !== 'string') return undefined
  try {
    const origin = new URL(uri).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}

/**
 * Whether the client is the server of a platform resource the token is for (RFC 8707): a
 * first-party confidential client whose redirect URIs share the origin of a resource the admin
 * registered (no organization's), as the rental's console client serves the rental's resource.
 */
async function servesResourceOf(deps: TokenDeps, client: Client, audience: unknown[]) {
  if (!client.first_party || client.client_type !== 'confidential') return false
  const origins = new Set(client.redirect_uris.map(originOf).filter((o) => o !== undefined))
  for (const aud of audience) {
    const origin = originOf(aud)
    if (typeof aud !== 'string' || origin === undefined || !origins.has(origin)) continue
    const resource = await deps.resources.byIdentifier(deps.db, aud)
    if (resource && resource.organization_id === null) return true
  }
  return false
}

/**
 * RFC 7662: what a token is, for the client it was issued for, or the client that serves the
 * platform resource it is for. Anyone else, and any dead token, learns only `{"active": false}`.
 */
export async function introspect(deps: TokenDeps, client: Client, token: string) {
  const inactive = { active: false as const }
  const payload = token.includes('.') ? await accessToken(deps, token) : undefined
  if (payload) {
    const audience = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
    const reader = audience.includes(client.client_id) || (await servesResourceOf(deps, client, audience))
    if (!reader || (await isDenied(deps.kv, payload.jti))) return inactive
    const { sub, aud, scope, exp, iat, sid, client_id, cnf, act, tsk, kya, agent, workload } = payload
    const token_type = cnf ? 'DPoP' : 'Bearer'
    // a client's token for itself (client_credentials) stands on its own: no session, no consent
    if (sid === undefined)
      return { active: true, sub, aud, scope, exp, iat, client_id, cnf, token_type, kya, agent, workload }
    const holder = await deps.tokens.holder(payload)
    if (!holder) return inactive
    const { user, consent } = holder
    return {
      active: true,
      sub,
      aud,
      scope,
      exp,
      iat,
      sid,
      client_id,
      cnf,
      token_type,
      act,
      tsk,
      ...(holder.client.first_party && !act && user.did ? { did: user.did } : {}),
      // the person's email, as /userinfo would release it to the token's holder (its `email` scope), for a
      // first-party client's own token: the resource it is for may need it (the rental makes an organization)
      ...(holder.client.first_party && !act && parseScope(scope as string | undefined).includes('email')
        ? { email: user.email, email_verified: user.email_verified_at !== null }
        : {}),
      ...(consent
        ? {
            consent: {
              commitment: consent.commitment,
              purpose: consent.purpose,
              scope: consent.granted.join(' '),
              granted_at: Math.floor(consent.granted_at!.getTime() / 1000),
            },
          }
        : {}),
    }
  }
  const row = await deps.tokens.refreshByHash(deps.db, digest(token))
  if (
    !row ||
    row.client_id !== client.client_id ||
    row.rotated_at ||
    row.revoked_at ||
    row.expires_at <= new Date()
  )
    return inactive
  return {
    active: true,
    scope: row.scope.join(' '),
    client_id: row.client_id,
    exp: Math.floor(row.expires_at.getTime() / 1000),
    iat: Math.floor(row.created_at.getTime() / 1000),
    sid: row.sid,
    token_type: 'refresh_token',
  }
}
