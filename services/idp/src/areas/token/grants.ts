import { createHash, randomBytes } from 'node:crypto'
import { AppError } from '@svc/kit'
import type { IdpDb, IdpTables } from '../../db.ts'
import { verifyPkce } from '../../oauth/pkce.ts'
import { parseScope } from '../../oauth/scopes.ts'
import { consumeCode } from '../authorize/store.ts'
import { targetResource } from '../resources/service.ts'
import type { SigningKeys } from '../keys/service.ts'
import {
  codeFamily,
  insertRefresh,
  refreshByHash,
  revokeFamily,
  rotateRefresh,
  setCodeFamily,
} from './refresh-store.ts'
import { type Grant, issueTokens } from './tokens.ts'

/** Refresh tokens are ours to time (identity-provider.md): thirty days, renewed by each rotation. */
export const REFRESH_TTL_MS = 30 * 86_400_000

type Client = Pick<IdpTables['clients'], 'client_id' | 'subject_type' | 'redirect_uris'>
export interface GrantDeps {
  db: IdpDb
  keys: SigningKeys
  issuer: string
  pairwiseSalt: string
}

const invalidGrant = (message: string) => new AppError(400, 'invalid_grant', message)
const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * Tokens for a grant, and a refresh token of `family` when offline_access is in its scope. A
 * rotated refresh token keeps the family's scope even when the access token asked for less (RFC 6749 §6).
 */
async function tokensFor(
  deps: GrantDeps,
  client: Client,
  grant: Grant,
  family: { id: string; scope: string[] },
) {
  const response = await issueTokens(deps.keys, deps.issuer, deps.pairwiseSalt, client, grant)
  if (!family.scope.includes('offline_access')) return response
  const refreshToken = randomBytes(32).toString('base64url')
  await insertRefresh(deps.db, {
    token_hash: digest(refreshToken),
    family_id: family.id,
    client_id: client.client_id,
    user_id: grant.user_id,
    sid: grant.sid,
    scope: family.scope,
    auth_time: grant.auth_time,
    acr: grant.acr,
    amr: grant.amr,
    resource: grant.resource,
    expires_at: new Date(Date.now() + REFRESH_TTL_MS),
  })
  return { ...response, refresh_token: refreshToken }
}

/** RFC 6749 §4.1.3 with PKCE. A replayed code revokes the refresh family it started (§4.1.2). */
export async function authorizationCodeGrant(
  deps: GrantDeps,
  client: Client,
  body: { code?: string; redirect_uri?: string; code_verifier?: string },
) {
  if (!body.code) throw new AppError(400, 'invalid_request', 'code is required')
  const codeHash = digest(body.code)
  const code = await consumeCode(deps.db, codeHash)
  if (!code) {
    const replayed = await codeFamily(deps.db, codeHash)
    if (replayed?.used_at && replayed.family_id) await revokeFamily(deps.db, replayed.family_id)
    throw invalidGrant('the code is invalid, expired or already used')
  }
  if (code.client_id !== client.client_id) throw invalidGrant('the code was issued to another client')
  if (body.redirect_uri !== code.redirect_uri)
    throw invalidGrant('redirect_uri differs from the authorization request')
  if (!verifyPkce(body.code_verifier, code.code_challenge))
    throw invalidGrant('code_verifier does not match the code_challenge')
  const familyId = `rtf_${randomBytes(12).toString('base64url')}`
  if (code.scope.includes('offline_access')) await setCodeFamily(deps.db, codeHash, familyId)
  return tokensFor(deps, client, code, { id: familyId, scope: code.scope })
}

/**
 * RFC 6749 §6 with rotation: each use returns a new refresh token and retires the old one. An
 * old token presented again means the family leaked: every token of the family is revoked.
 */
export async function refreshTokenGrant(
  deps: GrantDeps,
  client: Client,
  body: { refresh_token?: string; scope?: string },
) {
  if (!body.refresh_token) throw new AppError(400, 'invalid_request', 'refresh_token is required')
  const tokenHash = digest(body.refresh_token)
  const token = await rotateRefresh(deps.db, tokenHash)
  if (!token) {
    const known = await refreshByHash(deps.db, tokenHash)
    if (known?.rotated_at && known.client_id === client.client_id)
      await revokeFamily(deps.db, known.family_id)
    throw invalidGrant('the refresh token is invalid, expired, revoked or already used')
  }
  if (token.client_id !== client.client_id)
    throw invalidGrant('the refresh token was issued to another client')
  // a resource removed since: no more tokens for it
  await targetResource(deps.db, token.resource ?? undefined)
  const asked = body.scope === undefined ? token.scope : parseScope(body.scope)
  const beyond = asked.filter((s) => !token.scope.includes(s))
  if (beyond.length)
    throw new AppError(400, 'invalid_scope', `scope beyond the original grant: ${beyond.join(' ')}`)
  return tokensFor(
    deps,
    client,
    { ...token, scope: asked, nonce: null },
    { id: token.family_id, scope: token.scope },
  )
}
