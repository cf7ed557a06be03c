import type { FastifyRequest } from 'fastify'
import { rentalError } from '../../errors.ts'
import type { StepUpWhen } from '../../http/session.ts'
import { challenge, type TokenScheme } from './bearer.ts'

/** The `acr` of a sign-in with a second factor at the idp (identity-provider.md, ID token claims). */
export const MFA_ACR = 'urn:svc:mfa'
export const STEP_UP_PATH = '/api/auth/step-up'

export interface StepUpRules {
  /** Off: the guard lets everything through (development and tests by default; RENTAL_STEP_UP). */
  enabled: boolean
  /** Seconds an MFA sign-in counts for (RENTAL_STEP_UP_MAX_AGE_S). */
  maxAgeS: number
}

/** `return_to` as given: a same-origin relative path (`/…`, never `//host` or `/\host`), or null. */
export function safeReturnTo(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2000) return null
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return null
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return null
  const url = new URL(value, 'http://rental.invalid')
  if (url.origin !== 'http://rental.invalid') return null
  return `${url.pathname}${url.search}${url.hash}`
}

/** Where the browser was (its same-origin Referer's path), for the step-up to come back to; /console otherwise. */
function whereFrom(request: FastifyRequest): string {
  const referer = request.headers.referer
  const host = request.headers.host
  if (typeof referer === 'string' && host && referer.length <= 2000)
    try {
      const url = new URL(referer)
      if (url.host === host) return safeReturnTo(`${url.pathname}${url.search}${url.hash}`) ?? '/console'
    } catch {
      // not a URL: the default
    }
  return request.method === 'GET' ? (safeReturnTo(request.url) ?? '/console') : '/console'
}

/**
 * The `preHandler` of a sensitive route (after the session, permission and body checks): when the
 * rules are on and `when` says so, the console session must carry `acr` urn:svc:mfa with an
 * `auth_time` within the window; otherwise 401 `step_up_required`, naming the step-up URL in the
 * message, in `WWW-Authenticate` (the parameters of RFC 9470's challenge, under the `Session`
 * scheme) and in a `Link` (rel `step-up`). A request made with the idp's access token is judged
 * by the token's own `acr` and `auth_time` (RFC 9068 §2.2.1) and answered with RFC 9470's challenge
 * in its scheme (`Bearer` or `DPoP`): it needs a new token from a sign-in with a second factor.
 * Requests without a console session are left to the route's own checks (an API token was issued
 * under step-up itself).
 */
export function stepUpGuard(rules: StepUpRules, now: () => Date, when?: StepUpWhen) {
  return async (request: FastifyRequest) => {
    const session = request.consoleSession
    if (!rules.enabled || !session) return
    if (when && !(await when(request))) return
    const fresh =
      session.acr === MFA_ACR &&
      session.authTime !== null &&
      now().getTime() - session.authTime.getTime() <= rules.maxAgeS * 1000
    if (fresh) return
    if (session.token) throw tokenStepUp(session.token.scheme, rules.maxAgeS)
    const url = `${STEP_UP_PATH}?${new URLSearchParams({ return_to: whereFrom(request) })}`
    throw rentalError(
      'step_up_required',
      `this needs a second factor proven in the last ${rules.maxAgeS} seconds: open ${url} to sign in again with it, then retry`,
      {
        'www-authenticate': `Session error="insufficient_user_authentication", acr_values="${MFA_ACR}", max_age="${rules.maxAgeS}", step_up_uri="${url}"`,
        link: `<${url}>; rel="step-up"`,
      },
    )
  }
}

/** RFC 9470 §3 on a token's request: `insufficient_user_authentication` with what a new token needs. */
function tokenStepUp(scheme: TokenScheme, maxAgeS: number) {
  const message = `this needs a second factor proven in the last ${maxAgeS} seconds: get a new access token after signing in at the identity provider with one (acr_values ${MFA_ACR}, max_age ${maxAgeS}), then retry`
  return rentalError('step_up_required', message, {
    'www-authenticate': challenge(scheme, {
      error: 'insufficient_user_authentication',
      error_description: message,
      acr_values: MFA_ACR,
      max_age: String(maxAgeS),
    }),
  })
}
