import { createHash, randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { type IdpDb, inTransaction } from '../../db.ts'
import { isS256Challenge } from '../../oauth/pkce.ts'
import { withParams } from '../../oauth/redirect.ts'
import { parseScope, SCOPES } from '../../oauth/scopes.ts'
import { hasTotp } from '../mfa/index.ts'
import type { PasskeysService } from '../passkeys/index.ts'
import { currentSession } from '../sessions/index.ts'
import { consentOf, consentsToExport, deleteConsentsOf } from './consent-store.ts'
import { targetResource } from '../resources/index.ts'
import { unsupportedRequest } from './request-object.ts'
import type { ParService } from '../par/index.ts'
import { memberNeedsMfa } from '../orgs/index.ts'
import { createTask, parseTask, TASK_PARAMETERS } from '../tasks/index.ts'
import type { ClientsService } from '../clients/index.ts'
import type { Phrase } from '../../pages/i18n.ts'
import {
  clientIdsOfSession,
  clientIdsOfUser,
  codeExchange,
  consumeCode,
  firstPartyAppsOf,
  insertCode,
  recordCodeExchange,
  redeemCodeAtOnce,
} from './store.ts'

export const CODE_TTL_MS = 60_000

/** The parameters /authorize reads, and the ones a client may push to /par (RFC 9126 §2.1). */
export const AUTHORIZE_PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'prompt',
  'max_age',
  'login_hint',
  'acr_values',
  'resource',
  'dpop_jkt',
  // OIDC Core §3.1.2.1: the languages of the sign-in and consent pages (ui/i18n.ts)
  'ui_locales',
  ...TASK_PARAMETERS,
] as const

export interface AuthorizeQuery {
  response_type?: string
  client_id?: string
  redirect_uri?: string
  scope?: string
  state?: string
  nonce?: string
  code_challenge?: string
  code_challenge_method?: string
  prompt?: string
  max_age?: string
  login_hint?: string
  acr_values?: string
  resource?: string
  request_uri?: string
  request?: string
  dpop_jkt?: string
  ui_locales?: string
  purpose?: string
  max_uses?: string
  grant_ttl?: string
  ceiling?: string
}

/** What /authorize answers: an error page on our own domain, or a redirect (to the client, or to sign in). */
/** What the authorization endpoint reads of other areas: the client, the user's passkeys, a pushed request. */
export interface AuthorizeDeps {
  db: IdpDb
  issuer: string
  clients: ClientsService
  passkeys: PasskeysService
  par: ParService
}

export type Outcome =
  { kind: 'page'; status: number; title: Phrase; message: Phrase } | { kind: 'redirect'; location: string }

const PROMPTS = new Set(['none', 'login', 'consent'])

/** The request again, with one prompt value satisfied and removed (the others still apply). */
function without(query: AuthorizeQuery, prompts: Set<string>, satisfied: string): URLSearchParams {
  const rest = [...prompts].filter((p) => p !== satisfied)
  // a pushed request comes back by its request_uri, the satisfied prompt dropped (RFC 9126)
  if (query.request_uri)
    return new URLSearchParams({
      client_id: query.client_id!,
      request_uri: query.request_uri,
      prompt: rest.join(' '),
    })
  const back = new URLSearchParams(query as Record<string, string>)
  if (rest.length) back.set('prompt', rest.join(' '))
  else back.delete('prompt')
  return back
}
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

type Refusal = { error: string; description: string }
const refuse = (error: string, description: string): Refusal => ({ error, description })

/**
 * The scope a user is asked to authorize (/authorize, /par, /device_authorization): openid and
 * the scopes this issuer knows, and with a resource (RFC 8707) that resource's own scopes.
 */
export async function checkScope(db: IdpDb, scope: string | undefined, resourceId: string | undefined) {
  const scopes = parseScope(scope)
  if (!scopes.includes('openid')) return refuse('invalid_scope', 'scope must include openid')
  let resource
  try {
    resource = await targetResource(db, resourceId)
  } catch (err) {
    return refuse('invalid_target', (err as Error).message)
  }
  const known = [...SCOPES, ...(resource?.scopes ?? [])]
  const unknown = scopes.filter((s) => !known.includes(s))
  if (unknown.length) return refuse('invalid_scope', `unsupported scope: ${unknown.join(' ')}`)
  return { scopes, resource }
}

/**
 * The parameters of an authorization request, once its client and redirect URI are known: what
 * /authorize checks before anything else, and /par before it stores them (RFC 9126 §2.1).
 */
export async function checkParameters(db: IdpDb, query: AuthorizeQuery) {
  if (query.response_type !== 'code') return refuse('unsupported_response_type', 'response_type must be code')
  const scoped = await checkScope(db, query.scope, query.resource)
  if ('error' in scoped) return scoped
  const { scopes, resource } = scoped
  if (!query.code_challenge) return refuse('invalid_request', 'code_challenge is required (PKCE with S256)')
  if (query.code_challenge_method !== 'S256')
    return refuse('invalid_request', 'code_challenge_method must be S256')
  if (!isS256Challenge(query.code_challenge))
    return refuse('invalid_request', 'code_challenge is not an S256 challenge')
  const prompts = new Set(parseScope(query.prompt))
  if ([...prompts].some((p) => !PROMPTS.has(p)) || (prompts.has('none') && prompts.size > 1))
    return refuse('invalid_request', 'prompt must be none, or any of login and consent')
  const maxAge = query.max_age === undefined ? undefined : Number(query.max_age)
  if (maxAge !== undefined && !(Number.isSafeInteger(maxAge) && maxAge >= 0))
    return refuse('invalid_request', 'max_age must be a non-negative integer')
  // RFC 9449 §10: the code is bound to the key whose SHA-256 JWK thumbprint this is
  if (query.dpop_jkt !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(query.dpop_jkt))
    return refuse('invalid_request', 'dpop_jkt must be a base64url SHA-256 JWK thumbprint')
  const task = parseTask(query)
  if (typeof task === 'string') return refuse('invalid_request', task)
  return { scopes, resource, prompts, maxAge, task, codeChallenge: query.code_challenge }
}

/**
 * The authorization endpoint (identity-provider.md, /authorize). An unknown client or an
 * unregistered redirect URI is shown on our domain and never redirected; every later error goes
 * back to the client's redirect URI with `error`, `error_description`, `state` and `iss` (RFC 9207).
 */
export async function authorize(
  deps: AuthorizeDeps,
  request: FastifyRequest,
  given: AuthorizeQuery,
): Promise<Outcome> {
  const { db, issuer } = deps
  const unsupported = unsupportedRequest(given)
  let query = unsupported ? { ...unsupported.where, ...given } : given
  if (given.request_uri !== undefined && !unsupported) {
    const pushed = await deps.par.expand(db, given)
    if (!pushed)
      return {
        kind: 'page',
        status: 400,
        title: 'Expired sign-in link',
        message:
          'This sign-in link has expired or was already used. Go back to the application and start again.',
      }
    query = pushed
  }
  const client = query.client_id ? await deps.clients.liveRow(db, query.client_id) : undefined
  if (!client)
    return {
      kind: 'page',
      status: 400,
      title: 'Unknown application',
      message: 'This sign-in link names an application that is not registered.',
    }
  const redirectUri = query.redirect_uri
  if (!redirectUri || !client.redirect_uris.includes(redirectUri))
    return {
      kind: 'page',
      status: 400,
      title: 'Invalid sign-in link',
      message: 'The return address of this sign-in link is not registered for the application.',
    }

  const fail = (error: string, description: string): Outcome => ({
    kind: 'redirect',
    location: withParams(redirectUri, {
      error,
      error_description: description,
      state: query.state,
      iss: issuer,
    }),
  })
  if (unsupported) return fail(unsupported.error, unsupported.description)
  const checked = await checkParameters(db, query)
  if ('error' in checked) return fail(checked.error, checked.description)
  const { scopes, resource, prompts, maxAge } = checked

  const session = await currentSession(db, request)
  const wantsMfa =
    parseScope(query.acr_values).includes('urn:svc:mfa') ||
    (session !== undefined && (await memberNeedsMfa(db, client, session.user_id)))
  // a second factor is asked for and the account has one: a password-only session must sign in again
  const stepUp =
    session &&
    wantsMfa &&
    session.acr !== 'urn:svc:mfa' &&
    ((await hasTotp(db, session.user_id)) || (await deps.passkeys.hasPasskey(db, session.user_id)))
  // whole seconds, as auth_time is counted: max_age=0 asks for a sign-in, and is met by the one just made
  const stale =
    stepUp ||
    (session &&
      maxAge !== undefined &&
      Math.floor((Date.now() - session.auth_time.getTime()) / 1000) > maxAge)
  if (!session || stale || prompts.has('login')) {
    if (prompts.has('none')) return fail('login_required', 'the user is not signed in')
    // sign in, then come back without prompt=login (or it would ask again forever)
    const login = new URLSearchParams({ return_to: `/authorize?${without(query, prompts, 'login')}` })
    // login_hint prefills the email; anything that is not an email is ignored (identity-provider.md)
    if (query.login_hint && EMAIL.test(query.login_hint)) login.set('login_hint', query.login_hint)
    // a pushed request's ui_locales is not in its return_to: the page is told directly
    if (query.ui_locales) login.set('ui_locales', query.ui_locales)
    return { kind: 'redirect', location: `/ui/login?${login}` }
  }
  if (wantsMfa && session.acr !== 'urn:svc:mfa')
    return fail(
      'unmet_authentication_requirements',
      'a second factor was asked for and this account has none',
    )
  let granted = scopes
  if (!client.first_party) {
    const consent = await consentOf(db, session.user_id, client.client_id)
    const undecided = scopes.filter((s) => !consent.decided.includes(s))
    if (undecided.length || prompts.has('consent')) {
      if (prompts.has('none')) return fail('consent_required', 'the user has not consented to this request')
      // ask, then come back without prompt=consent (or it would ask again forever)
      const back = without(query, prompts, 'consent')
      const consent = new URLSearchParams({ return_to: `/authorize?${back}` })
      if (query.ui_locales) consent.set('ui_locales', query.ui_locales)
      return { kind: 'redirect', location: `/ui/consent?${consent}` }
    }
    // openid is always present; everything else only as granted (identity-provider.md, /authorize 3)
    granted = scopes.filter((s) => s === 'openid' || consent.granted.includes(s))
  }

  const code = randomBytes(32).toString('base64url')
  const issued = await inTransaction(db, async (trx) => {
    if (query.request_uri && !(await deps.par.use(trx, query.request_uri))) return false
    const owner = {
      user_id: session.user_id,
      client_id: client.client_id,
      resource: resource?.identifier ?? null,
    }
    await insertCode(trx, {
      ...owner,
      code_hash: createHash('sha256').update(code).digest(),
      sid: session.sid,
      redirect_uri: redirectUri,
      scope: granted,
      nonce: query.nonce ?? null,
      code_challenge: checked.codeChallenge,
      auth_time: session.auth_time,
      acr: session.acr,
      amr: session.amr,
      expires_at: new Date(Date.now() + CODE_TTL_MS),
      task_id: checked.task ? await createTask(trx, checked.task, owner) : null,
      dpop_jkt: query.dpop_jkt ?? null,
    })
    return true
  })
  if (!issued) return fail('invalid_request', 'the request_uri was already used')
  return { kind: 'redirect', location: withParams(redirectUri, { code, state: query.state, iss: issuer }) }
}

export type { CodeRow } from './store.ts'

/** What other areas may ask of codes and consents (in the caller's db or transaction). */
export const authorizeService = {
  /** Marks a live code used and returns it, in one statement: of two redemptions, one wins. */
  consumeCode,
  /** What a code's exchange issued (its refresh family, its access token), to revoke on a replay. */
  codeExchange,
  recordCodeExchange,
  /** The whole exchange of a plain code in one statement (no transaction), or nothing (./store.ts). */
  redeemCodeAtOnce,
  clientIdsOfSession,
  /** The clients the user consented to or redeemed a code at. */
  clientIdsOfUser,
  /** The first-party apps the user signed in to, with the last time (the account page). */
  firstPartyAppsOf,
  consentOf,
  consentsToExport,
  forgetUser: deleteConsentsOf,
}
