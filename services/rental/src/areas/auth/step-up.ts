import { timingSafeEqual } from 'node:crypto'
import { AppError } from '@svc/kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { rentalError } from '../../errors.ts'
import type { ConsoleSession } from './hooks.ts'
import { type AuthDeps, type PendingLogin, startLogin, type Tokens } from './service.ts'
import { MFA_ACR, safeReturnTo } from './step-up-guard.ts'
import { recordStepUp } from './store.ts'

/** How old the step-up's `auth_time` may be when it comes back (it asked for `max_age=0`): clock skew and the time to type a code. */
const FRESH_S = 300

/**
 * `GET /api/auth/step-up?return_to=…`: a fresh code flow (PKCE S256, state, nonce) asking the idp
 * for `acr_values=urn:svc:mfa` and `max_age=0`, for the signed-in session; answers the idp's URL.
 */
export async function startStepUp(
  deps: AuthDeps,
  session: ConsoleSession,
  returnTo: string | undefined,
  reply: FastifyReply,
): Promise<string> {
  const back = returnTo === undefined ? '/console' : safeReturnTo(returnTo)
  if (back === null)
    throw rentalError('invalid_return_to', 'return_to must be a path of this site (starting with one /)')
  return startLogin(deps, reply, {
    pending: { sessionHash: session.idHash.toString('hex'), subject: session.subject, returnTo: back },
    params: { acr_values: MFA_ACR, max_age: '0', ...(session.email ? { login_hint: session.email } : {}) },
  })
}

/** Where to set up a second factor: the idp's account page. */
const accountPage = (deps: AuthDeps) => `${deps.link.configuration().serverMetadata().issuer}/ui/account`

/**
 * The step-up's callback: the same browser session as started it, the idp's answer (an account
 * with no second factor: 403 `second_factor_missing` saying where to set one up), the ID token
 * verified by openid-client (signature, iss, aud, exp, nonce), then its `sub` must be the
 * session's, its `acr` urn:svc:mfa and its `auth_time` recent. The session then keeps `acr`
 * and `auth_time`; the browser goes back to `return_to`.
 */
export async function finishStepUp(
  deps: AuthDeps,
  request: FastifyRequest,
  pending: PendingLogin,
  exchange: () => Promise<Tokens>,
): Promise<string> {
  const step = pending.stepUp!
  const session = await deps.sessions.find(request)
  const started = Buffer.from(step.sessionHash, 'hex')
  if (!session || started.length !== 32 || !timingSafeEqual(session.idHash, started))
    throw rentalError('unauthenticated', 'the session that started this step-up is no longer signed in here')
  const query = request.query as Record<string, string | undefined>
  let tokens: Tokens
  try {
    tokens = await exchange()
  } catch (err) {
    // iss and state were checked before the idp's error is believed
    if (
      err instanceof AppError &&
      err.code === 'login_failed' &&
      query.error === 'unmet_authentication_requirements'
    )
      throw rentalError(
        'second_factor_missing',
        `your account has no second factor, so this cannot be confirmed: set up an authenticator app (TOTP) or a passkey at ${accountPage(deps)}, then try again`,
      )
    throw err
  }
  const claims = tokens.claims()!
  const authTime = typeof claims.auth_time === 'number' ? claims.auth_time * 1000 : NaN
  const now = deps.sessions.now().getTime()
  if (claims.sub !== step.subject)
    throw rentalError('step_up_failed', 'the step-up was signed in as another person than this session')
  if (claims.acr !== MFA_ACR)
    throw rentalError(
      'step_up_failed',
      `the step-up did not prove a second factor (acr ${String(claims.acr)})`,
    )
  if (!(Math.abs(now - authTime) <= FRESH_S * 1000))
    throw rentalError('step_up_failed', 'the step-up sign-in is not recent (auth_time)')
  const idToken =
    typeof tokens.id_token === 'string' && tokens.id_token.length <= 20_000 ? tokens.id_token : null
  await recordStepUp(deps.sessions.db, session.idHash, {
    acr: MFA_ACR,
    authTime: new Date(authTime),
    idToken,
  })
  return step.returnTo
}
