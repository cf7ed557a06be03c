import { createHash, randomBytes } from 'node:crypto'
import { AppError } from '@svc/kit'
import { type IdpDb, type IdpTables, inTransaction } from '../../db.ts'
import { s256Challenge, verifyPkce } from '../../oauth/pkce.ts'
import { parseScope } from '../../oauth/scopes.ts'
import type { SigningKeys } from '../keys/service.ts'
import type { Kv } from '@svc/kit'
import { denyAccessToken } from '../../oauth/denylist.ts'
import {
  insertRefresh,
  refreshByHash,
  refreshFrom,
  revokeFamily,
  rotateAtOnce,
  rotateRefresh,
} from './store.ts'
import { orgClaim } from '../orgs/index.ts'
import { spendTask } from '../tasks/index.ts'
import type { TaskRow } from '../tasks/service.ts'
import { ACCESS_TOKEN_TTL_S, type Grant, issueTokens, newJti } from './tokens.ts'
import { idpError } from '../../errors.ts'
import type { AccountsService } from '../accounts/index.ts'
import type { AuthorizeService } from '../authorize/index.ts'
import type { ClientsService } from '../clients/index.ts'
import type { CredentialsService } from '../credentials/index.ts'
import type { DeviceService } from '../device/index.ts'
import type { OrgsService } from '../orgs/index.ts'
import type { ResourcesService } from '../resources/index.ts'
import type { SessionsService } from '../sessions/index.ts'
import type { TasksService } from '../tasks/index.ts'

/** Refresh tokens are ours to time (identity-provider.md): thirty days, renewed by each rotation. */
export const REFRESH_TTL_MS = 30 * 86_400_000

type Client = Pick<IdpTables['clients'], 'client_id' | 'subject_type' | 'redirect_uris' | 'organization_id'>
/** The areas the grants read, each through its service. */
export interface GrantAreas {
  accounts: AccountsService
  authorize: AuthorizeService
  clients: ClientsService
  credentials: CredentialsService
  device: DeviceService
  orgs: OrgsService
  resources: ResourcesService
  sessions: SessionsService
  tasks: TasksService
}

export interface GrantDeps extends GrantAreas {
  db: IdpDb
  /** Where revoked access tokens are denylisted (a replayed code revokes its exchange's token). */
  kv: Kv
  keys: SigningKeys
  issuer: string
  pairwiseSalt: string
  /** The time of grants that wait on the user (device codes): the system's, or a test's. */
  now: () => Date
}

const invalidGrant = (message: string) => idpError('invalid_grant', message)
const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * A refresh token of `family` when offline_access is in its scope. A rotated refresh token keeps
 * the family's scope even when the access token asked for less (RFC 6749 §6).
 */
export async function saveRefresh(
  db: IdpDb,
  client: Client,
  grant: Grant,
  family: { id: string; scope: string[]; jkt: string | null },
  task: TaskRow | undefined,
) {
  if (!family.scope.includes('offline_access')) return undefined
  const refreshToken = randomBytes(32).toString('base64url')
  await insertRefresh(db, {
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
    dpop_jkt: family.jkt,
    task_id: task?.id ?? null,
    // a task grant's family ends with it
    expires_at: new Date(Math.min(Date.now() + REFRESH_TTL_MS, task?.expires_at.getTime() ?? Infinity)),
  })
  return refreshToken
}

/** The token response: signed after the transaction, whose connection the key store may need. */
export async function respond(
  deps: GrantDeps,
  client: Client,
  saved: { grant: Grant; task: TaskRow | undefined; refreshToken: string | undefined; accessJti?: string },
  jkt: string | undefined,
) {
  const org = saved.grant.scope.includes('organization')
    ? await orgClaim(deps.db, client, saved.grant.user_id)
    : undefined
  const response = await issueTokens(
    deps,
    client,
    saved.grant,
    jkt,
    saved.task,
    org ? { org } : {},
    saved.accessJti,
  )
  return saved.refreshToken ? { ...response, refresh_token: saved.refreshToken } : response
}

/**
 * Runs a grant's reads and writes in one transaction, so a crash never leaves a spent code without
 * its refresh token, or a rotated token without its successor. A refusal is returned, not thrown,
 * so what it must change (a consumed code, a family revoked as stolen) still commits.
 */
export async function atomically<T>(
  deps: GrantDeps,
  work: (trx: IdpDb) => Promise<T | AppError>,
): Promise<T> {
  const outcome = await inTransaction(deps.db, work)
  if (outcome instanceof AppError) throw outcome
  return outcome
}

/**
 * RFC 6749 §4.1.3 with PKCE. A replayed code revokes what its exchange issued (§4.1.2): the refresh
 * family it started and the access token, whose `jti` is chosen and recorded with the exchange so
 * that a replay committed after it always finds it.
 */
export async function authorizationCodeGrant(
  deps: GrantDeps,
  client: Client,
  body: { code?: string; redirect_uri?: string; code_verifier?: string },
  jkt?: string,
) {
  if (!body.code) throw idpError('invalid_request', 'code is required')
  const codeHash = digest(body.code)
  const saved =
    (await exchangeAtOnce(deps, client, codeHash, body, jkt)) ??
    (await exchangeInFull(deps, client, codeHash, body, jkt))
  return respond(deps, client, saved, jkt)
}

/**
 * The usual exchange in one statement, without a transaction (one statement is atomic): the code
 * consumed, what the exchange issues recorded and the refresh token saved together. Nothing when
 * the code is not live, not this client's, fails a check or is under a task: the full path then
 * finds out which, and does what that case requires (a replay revokes, a failed check spends).
 */
async function exchangeAtOnce(
  deps: GrantDeps,
  client: Client,
  codeHash: Buffer,
  body: { redirect_uri?: string; code_verifier?: string },
  jkt: string | undefined,
) {
  const familyId = `rtf_${randomBytes(12).toString('base64url')}`
  const accessJti = newJti()
  const refreshToken = randomBytes(32).toString('base64url')
  const code = await deps.authorize.redeemCodeAtOnce(
    deps.db,
    codeHash,
    {
      client_id: client.client_id,
      redirect_uri: body.redirect_uri ?? null,
      code_challenge: s256Challenge(body.code_verifier),
      jkt: jkt ?? null,
    },
    {
      family_id: familyId,
      access_token_jti: accessJti,
      access_token_expires_at: new Date(Date.now() + ACCESS_TOKEN_TTL_S * 1000 + 5000),
    },
    refreshFrom('consumed', {
      token_hash: digest(refreshToken),
      expires_at: new Date(Date.now() + REFRESH_TTL_MS),
      dpop_jkt: jkt ?? null,
    }),
  )
  if (!code) return undefined
  const task = undefined
  return { grant: code, task, accessJti, refreshToken: code.family_id ? refreshToken : undefined }
}

/** Every case of the exchange, in one transaction (./grants.ts `exchangeAtOnce` takes the usual one first). */
async function exchangeInFull(
  deps: GrantDeps,
  client: Client,
  codeHash: Buffer,
  body: { redirect_uri?: string; code_verifier?: string },
  jkt: string | undefined,
) {
  return atomically(deps, async (trx) => {
    const code = await deps.authorize.consumeCode(trx, codeHash)
    if (!code) {
      const replayed = await deps.authorize.codeExchange(trx, codeHash)
      if (replayed?.used_at && replayed.family_id) await revokeFamily(trx, replayed.family_id)
      if (replayed?.used_at && replayed.access_token_jti && replayed.access_token_expires_at)
        await denyAccessToken(
          deps.kv,
          replayed.access_token_jti,
          Math.ceil(replayed.access_token_expires_at.getTime() / 1000),
        )
      return invalidGrant('the code is invalid, expired or already used')
    }
    if (code.client_id !== client.client_id) return invalidGrant('the code was issued to another client')
    if (body.redirect_uri !== code.redirect_uri)
      return invalidGrant('redirect_uri differs from the authorization request')
    if (!verifyPkce(body.code_verifier, code.code_challenge))
      return invalidGrant('code_verifier does not match the code_challenge')
    if (code.dpop_jkt && code.dpop_jkt !== jkt)
      return invalidGrant('the code is bound to a DPoP key (dpop_jkt): prove possession of that key')
    const task = code.task_id ? await spendTask(trx, code.task_id) : undefined
    if (task instanceof AppError) return task
    const familyId = `rtf_${randomBytes(12).toString('base64url')}`
    const accessJti = newJti()
    await deps.authorize.recordCodeExchange(trx, codeHash, {
      family_id: code.scope.includes('offline_access') ? familyId : null,
      access_token_jti: accessJti,
      // the token ends no later than this (sooner under a task grant)
      access_token_expires_at: new Date(Date.now() + ACCESS_TOKEN_TTL_S * 1000 + 5000),
    })
    return {
      grant: code,
      task,
      accessJti,
      refreshToken: await saveRefresh(
        trx,
        client,
        code,
        { id: familyId, scope: code.scope, jkt: jkt ?? null },
        task,
      ),
    }
  })
}

/**
 * RFC 6749 §6 with rotation: each use returns a new refresh token and retires the old one. An
 * old token presented again means the family leaked: every token of the family is revoked.
 */
export async function refreshTokenGrant(
  deps: GrantDeps,
  client: Client,
  body: { refresh_token?: string; scope?: string },
  jkt?: string,
) {
  if (!body.refresh_token) throw idpError('invalid_request', 'refresh_token is required')
  const tokenHash = digest(body.refresh_token)
  const saved =
    (await rotateInOne(deps, client, tokenHash, body.scope, jkt)) ??
    (await rotateInFull(deps, client, tokenHash, body.scope, jkt))
  return respond(deps, client, saved, jkt)
}

/**
 * The usual rotation in one statement, without a transaction: the presented token retired and its
 * successor saved together. Nothing when the token is not live, not this client's, fails a check,
 * is for a resource or under a task: the full path then finds out which (a replay revokes the family).
 */
async function rotateInOne(
  deps: GrantDeps,
  client: Client,
  tokenHash: Buffer,
  scope: string | undefined,
  jkt: string | undefined,
) {
  const refreshToken = randomBytes(32).toString('base64url')
  const asked = scope === undefined ? null : parseScope(scope)
  const token = await rotateAtOnce(
    deps.db,
    tokenHash,
    { client_id: client.client_id, jkt: jkt ?? null, scope: asked },
    { token_hash: digest(refreshToken), expires_at: new Date(Date.now() + REFRESH_TTL_MS) },
  )
  if (!token) return undefined
  const grant = { ...token, scope: asked ?? token.scope, nonce: null }
  const task = undefined
  return { grant, task, refreshToken: token.scope.includes('offline_access') ? refreshToken : undefined }
}

/** Every case of the rotation, in one transaction (`rotateInOne` takes the usual one first). */
async function rotateInFull(
  deps: GrantDeps,
  client: Client,
  tokenHash: Buffer,
  scope: string | undefined,
  jkt: string | undefined,
) {
  const body = { scope }
  return atomically(deps, async (trx) => {
    const token = await rotateRefresh(trx, tokenHash)
    if (!token) {
      const known = await refreshByHash(trx, tokenHash)
      if (known?.rotated_at && known.client_id === client.client_id) await revokeFamily(trx, known.family_id)
      return invalidGrant('the refresh token is invalid, expired, revoked or already used')
    }
    // refusals from here roll the rotation back: a bad request does not end the family
    if (token.client_id !== client.client_id)
      throw invalidGrant('the refresh token was issued to another client')
    // RFC 9449 §5: a bound family is refreshed only with a proof of the same key
    if (token.dpop_jkt && token.dpop_jkt !== jkt)
      throw invalidGrant('the refresh token is bound to a DPoP key: prove possession of that key')
    // a resource removed since: no more tokens for it
    if (token.resource && !(await deps.resources.byIdentifier(trx, token.resource)))
      throw idpError('invalid_target', `no resource ${token.resource} is registered`)
    const asked = body.scope === undefined ? token.scope : parseScope(body.scope)
    const beyond = asked.filter((s) => !token.scope.includes(s))
    if (beyond.length) throw idpError('invalid_scope', `scope beyond the original grant: ${beyond.join(' ')}`)
    const task = token.task_id ? await spendTask(trx, token.task_id) : undefined
    if (task instanceof AppError) throw task
    const grant = { ...token, scope: asked, nonce: null }
    return {
      grant,
      task,
      refreshToken: await saveRefresh(
        trx,
        client,
        grant,
        { id: token.family_id, scope: token.scope, jkt: token.dpop_jkt },
        task,
      ),
    }
  })
}
