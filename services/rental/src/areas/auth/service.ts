import { randomBytes, timingSafeEqual } from 'node:crypto'
import { AppError, type Kv } from '@svc/kit'
import { rentalError, rentalErrors } from '../../errors.ts'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { type ConsoleSession, type ConsoleSessions, sha256 } from './hooks.ts'
import { CALLBACK_PATH, type IdpLink } from './idp-link.ts'
import { endSession, endSessionsOf, idTokenOf, insertSession } from './store.ts'

/** The pending sign-in: a random id in this cookie (path /auth, ten minutes); its state in the kv. */
export const LOGIN_COOKIE = 'rental_login'
const LOGIN_TTL_MS = 10 * 60_000
const SCOPE = 'openid email profile'
export const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

export interface PendingLogin {
  state: string
  nonce: string
  verifier: string
  /** A step-up (GET /api/auth/step-up): the session it raises (SHA-256 of its cookie id, hex) and where it returns. */
  stepUp?: { sessionHash: string; subject: string; returnTo: string }
}

export interface AuthDeps {
  link: IdpLink
  sessions: ConsoleSessions
  kv: Kv
  baseUrl: string
  /** The client's organization membership, made at its first sign-in (the orgs area). */
  join(who: { subject: string; email: string | null; emailVerified: boolean }): Promise<unknown>
}

const loginKey = (id: string) => `login:${sha256(id).toString('hex')}`

const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/**
 * `GET /auth/login`: a pending sign-in kept server-side, and the idp's authorization URL (PKCE
 * S256, state, nonce); a step-up adds its own parameters (`acr_values`, `max_age`).
 */
export async function startLogin(
  deps: AuthDeps,
  reply: FastifyReply,
  stepUp?: { pending: NonNullable<PendingLogin['stepUp']>; params: Record<string, string> },
  extra: { ui_locales?: string } = {},
): Promise<string> {
  const config = deps.link.configuration()
  const pending: PendingLogin = {
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    verifier: oidc.randomPKCECodeVerifier(),
    ...(stepUp ? { stepUp: stepUp.pending } : {}),
  }
  const id = randomBytes(32).toString('base64url')
  await deps.kv.set(loginKey(id), JSON.stringify(pending), LOGIN_TTL_MS)
  reply.setCookie(LOGIN_COOKIE, id, {
    path: '/auth',
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.sessions.options.secureCookies,
    maxAge: LOGIN_TTL_MS / 1000,
  })
  return oidc
    .buildAuthorizationUrl(config, {
      redirect_uri: `${deps.baseUrl}${CALLBACK_PATH}`,
      scope: SCOPE,
      response_type: 'code',
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
      ...extra,
      ...stepUp?.params,
    })
    .toString()
}

/** Takes the pending sign-in once: a second callback for it (a replay) finds nothing. */
async function takePending(deps: AuthDeps, request: FastifyRequest): Promise<PendingLogin> {
  const id = request.cookies[LOGIN_COOKIE]
  if (!id || id.length > 100)
    throw rentalError(
      'login_expired',
      'no sign-in is in progress in this browser: start again at /auth/login',
    )
  const key = loginKey(id)
  // the claim makes the take atomic across instances: only one callback gets the pending state
  const claimed = await deps.kv.setIfAbsent(`${key}:taken`, '1', LOGIN_TTL_MS)
  const value = claimed ? await deps.kv.get(key) : null
  await deps.kv.delete(key)
  if (!value)
    throw rentalError(
      'login_expired',
      'this sign-in has expired or was already completed: start again at /auth/login',
    )
  return JSON.parse(value) as PendingLogin
}

/** Maps what openid-client throws: the idp's or the browser's answer refused is 400, the idp unreachable 502. */
export function loginError(err: unknown): AppError {
  if (err instanceof AppError) return err
  if (err instanceof oidc.ResponseBodyError)
    return rentalError('login_failed', `the identity provider refused the code: ${err.error}`)
  if (err instanceof oidc.AuthorizationResponseError)
    return rentalError('login_failed', `the identity provider answered ${err.error}`)
  const code = (err as { code?: string }).code
  if (
    err instanceof TypeError ||
    code === 'OAUTH_TIMEOUT' ||
    code === 'OAUTH_ABORT' ||
    code === 'OAUTH_RESPONSE_IS_NOT_CONFORM'
  )
    return rentalErrors.errorWith(502, 'idp_unavailable', 'the identity provider did not answer the sign-in')
  return rentalError('login_failed', `the sign-in response was refused: ${(err as Error).message}`)
}

export type Tokens = Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>

/**
 * `GET /auth/callback`: the pending sign-in is taken (once), `iss` (RFC 9207) and `state` are
 * checked, then one token exchange, whose ID token openid-client validates (signature, `iss`,
 * `aud`, `exp`, nonce). The profile comes from `/userinfo`. Then a session and its cookie; a
 * step-up's callback raises the current session instead (step-up.ts). Answers where to go next.
 */
export async function finishLogin(
  deps: AuthDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  finishStepUp: (pending: PendingLogin, exchange: () => Promise<Tokens>) => Promise<string>,
): Promise<string> {
  reply.clearCookie(LOGIN_COOKIE, { path: '/auth' })
  const pending = await takePending(deps, request)
  const exchange = () => exchangeCode(deps, request, pending)
  if (pending.stepUp) return finishStepUp(pending, exchange)
  const config = deps.link.configuration()
  const tokens = await exchange()
  const claims = tokens.claims()!
  let profile: Record<string, unknown> = {}
  try {
    profile = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
  } catch (err) {
    request.log.warn(
      { err: (err as Error).message },
      'userinfo failed: the session has the ID token claims only',
    )
  }
  const text = (value: unknown) => (typeof value === 'string' && value.length <= 500 ? value : null)
  const minted = deps.sessions.mint()
  const now = deps.sessions.now()
  const email = text(profile.email ?? claims.email)
  // an email counts as verified only when the idp says so for that same email
  const emailVerified = email !== null && (profile.email_verified ?? claims.email_verified) === true
  await deps.join({ subject: claims.sub, email, emailVerified })
  await insertSession(deps.sessions.db, {
    idHash: minted.idHash,
    csrfHash: minted.csrfHash,
    subject: claims.sub,
    idpSid: text(claims.sid),
    name: text(profile.name ?? claims.name),
    email,
    emailVerified,
    clientDid: text(profile.did ?? claims.did),
    idToken: typeof tokens.id_token === 'string' && tokens.id_token.length <= 20_000 ? tokens.id_token : null,
    acr: text(claims.acr),
    authTime: typeof claims.auth_time === 'number' ? new Date(claims.auth_time * 1000) : null,
    expiresAt: new Date(now.getTime() + deps.sessions.options.ttlHours * 3_600_000),
  })
  deps.sessions.setCookie(reply, minted.id)
  return '/console'
}

/** `iss` and `state` checked, then the one code exchange (the ID token validated by openid-client). */
async function exchangeCode(deps: AuthDeps, request: FastifyRequest, pending: PendingLogin): Promise<Tokens> {
  const config = deps.link.configuration()
  const query = request.query as Record<string, string | undefined>
  const issuer = config.serverMetadata().issuer
  if (typeof query.iss !== 'string' || !same(query.iss, issuer))
    throw rentalError(
      'invalid_issuer',
      'the authorization response does not come from our identity provider (iss)',
    )
  if (typeof query.state !== 'string' || !same(query.state, pending.state))
    throw rentalError('invalid_state', 'the authorization response does not belong to this sign-in (state)')
  try {
    return await oidc.authorizationCodeGrant(config, new URL(request.url, deps.baseUrl), {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    })
  } catch (err) {
    throw loginError(err)
  }
}

/**
 * `POST /auth/logout`: ends the session here, and names the idp's logout page to end the one there
 * too (RP-Initiated Logout 1.0: the sign-in's ID token as `id_token_hint`, with `client_id`).
 */
/** Ends the session here; the idp's logout URL asks for its signed-out page in `lang` (ui_locales). */
export async function logout(
  deps: AuthDeps,
  session: ConsoleSession,
  reply: FastifyReply,
  lang: 'en' | 'ar' = 'en',
) {
  const idToken = await idTokenOf(deps.sessions.db, session.idHash)
  await endSession(deps.sessions.db, session.idHash, deps.sessions.now())
  deps.sessions.clearCookie(reply)
  let idpLogoutUrl: string | null = null
  if (deps.link.ready) {
    const config = deps.link.configuration()
    if (config.serverMetadata().end_session_endpoint)
      idpLogoutUrl = oidc
        .buildEndSessionUrl(config, {
          ...(idToken ? { id_token_hint: idToken } : {}),
          client_id: config.clientMetadata().client_id,
          post_logout_redirect_uri: `${deps.baseUrl}/`,
          ui_locales: lang,
        })
        .toString()
  }
  return { signed_out: true as const, idp_logout_url: idpLogoutUrl }
}

const invalidLogoutToken = (message: string) => rentalError('invalid_logout_token', message)

/**
 * OpenID Connect Back-Channel Logout 1.0 §2.6: the logout token is a JWT signed by the idp (its
 * JWKS), typed `logout+jwt`, for our client, recent, with the back-channel `events` member, a
 * `sid` or `sub`, a `jti` never seen before, and no `nonce`. Ends the matching sessions.
 */
export async function backchannelLogout(deps: AuthDeps, logoutToken: string): Promise<number> {
  const config = deps.link.configuration()
  let payload: Record<string, unknown>
  try {
    ;({ payload } = await jwtVerify(logoutToken, deps.link.jwks(), {
      issuer: config.serverMetadata().issuer,
      audience: config.clientMetadata().client_id,
      typ: 'logout+jwt',
      algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      requiredClaims: ['iat', 'jti', 'events'],
      maxTokenAge: '10m',
      clockTolerance: 30,
    }))
  } catch (err) {
    throw invalidLogoutToken(`the logout token is not valid: ${(err as Error).message}`)
  }
  const events = payload.events as Record<string, unknown> | undefined
  const event = events && typeof events === 'object' ? events[BACKCHANNEL_EVENT] : undefined
  if (!event || typeof event !== 'object' || Array.isArray(event))
    throw invalidLogoutToken(`the logout token's events claim has no ${BACKCHANNEL_EVENT} object`)
  if ('nonce' in payload) throw invalidLogoutToken('a logout token must not carry a nonce')
  const sid = typeof payload.sid === 'string' ? payload.sid : undefined
  const sub = typeof payload.sub === 'string' ? payload.sub : undefined
  if (!sid && !sub) throw invalidLogoutToken('the logout token names neither a sid nor a sub')
  if (typeof payload.jti !== 'string' || payload.jti.length > 200)
    throw invalidLogoutToken('the logout token has no valid jti')
  const exp = typeof payload.exp === 'number' ? payload.exp * 1000 : Date.now() + 600_000
  const fresh = await deps.kv.setIfAbsent(
    `logout-jti:${sha256(payload.jti).toString('hex')}`,
    '1',
    Math.max(60_000, exp - Date.now() + 60_000),
  )
  if (!fresh) throw invalidLogoutToken('this logout token was already used (jti)')
  return endSessionsOf(deps.sessions.db, { sid, subject: sub }, deps.sessions.now())
}
