import type { App } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { rentalError } from '../errors.ts'
import type { Membership } from './permissions.ts'

/** The signed-in client, as the session check finds it (the auth area's console sessions). */
export interface ConsoleSession {
  idHash: Buffer
  subject: string
  idpSid: string | null
  name: string | null
  email: string | null
  /** Whether the idp said `email` is verified (invitations and operators by email need it). */
  emailVerified: boolean
  clientDid: string | null
  /** The `acr` of the session's last ID token (`urn:svc:mfa`: a second factor) and its `auth_time`. */
  acr: string | null
  authTime: Date | null
  csrfHash: Buffer
  /** The CSRF token of this session (derived from the cookie id, never stored); empty for a token. */
  csrfToken: string
  /**
   * The subject's membership, read in the session's own statement (areas/orgs): null when the
   * subject is no member yet, undefined when not read with the session (an access token's).
   */
  membership?: Membership | null | undefined
  /**
   * Set when the request was authenticated by the idp's access token in `Authorization` rather
   * than by the cookie (areas/auth/bearer.ts): no CSRF token is needed, and nothing is stored.
   */
  token?: { scheme: 'Bearer' | 'DPoP'; clientId: string; expiresAt: Date }
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession: ConsoleSession | null
  }
}

/** The header every S+C route checks against the session's CSRF token (from `GET /api/me`). */
export const CSRF_HEADER = 'x-csrf-token'

/** An OpenAPI security requirement: any one of its sets of schemes. */
export type Security = Array<Record<string, string[]>>

/**
 * The alternative to the console session on every signed-in route: the idp's access token for
 * this service, as a Bearer token or a DPoP-bound one (its proof in the `DPoP` header); no CSRF token.
 */
export const ACCESS_TOKEN_SECURITY: Security = [{ idpAccessToken: [] }, { idpDpopToken: [] }]

/** OpenAPI security of S and S+C routes (the schemes are declared in app.ts). */
export const SESSION_SECURITY: Security = [{ consoleSession: [] }, ...ACCESS_TOKEN_SECURITY]
export const CSRF_SECURITY: Security = [{ consoleSession: [], csrfToken: [] }, ...ACCESS_TOKEN_SECURITY]

/** OpenAPI security of /v1 reads and writes: the console session (with CSRF on writes), an organization key, or an access token. */
export const TENANT_READ_SECURITY: Security = [
  { consoleSession: [] },
  { organizationKey: [] },
  ...ACCESS_TOKEN_SECURITY,
]
export const TENANT_WRITE_SECURITY: Security = [
  { consoleSession: [], csrfToken: [] },
  { organizationKey: [] },
  ...ACCESS_TOKEN_SECURITY,
]

/** When a guarded route needs step-up for this request (e.g. a release above the amount); unset: always. */
export type StepUpWhen = (request: FastifyRequest) => boolean | Promise<boolean>

/** The checks behind the session hooks, given once per app by the auth area (its console sessions). */
export interface SessionChecks {
  /** 401 without a live session or a valid access token; sets `request.consoleSession`. */
  checkSession(request: FastifyRequest): Promise<void>
  /** 403 `csrf_failed` unless the CSRF header holds the session's token (a token's request needs none). */
  checkCsrf(request: FastifyRequest): Promise<void>
  /** 401 `step_up_required` unless a recent second factor, when the rules are on and `when` says so. */
  checkStepUp(request: FastifyRequest, when?: StepUpWhen): Promise<void>
}

const CHECKS = Symbol('rental session checks')

function checksOf(request: FastifyRequest): SessionChecks {
  const checks = (request.server as unknown as { [CHECKS]?: SessionChecks })[CHECKS]
  if (!checks) throw new Error('no session checks: the auth area provides them when it mounts')
  return checks
}

/** `onRequest` hook of S routes: 401 without a live session; sets `request.consoleSession`. */
export const requireSession = async (request: FastifyRequest) => checksOf(request).checkSession(request)

/** `onRequest` hook of S+C routes, after `requireSession`: 403 `csrf_failed` without the session's CSRF token. */
export const requireCsrf = async (request: FastifyRequest) => checksOf(request).checkCsrf(request)

/** `preHandler` of a sensitive route: a recent second factor (step-up) when `when` (default: always) says so. */
export const requireStepUp = (when?: StepUpWhen) => async (request: FastifyRequest) =>
  checksOf(request).checkStepUp(request, when)

/** The OpenAPI security each guarding `onRequest` hook stands for (the session's, and the /v1 guard's). */
const securityOfHook = new WeakMap<object, Security>([
  [requireCsrf, CSRF_SECURITY],
  [requireSession, SESSION_SECURITY],
])

/**
 * Declares the OpenAPI security a guarding `onRequest` hook stands for (the tenant area's /v1
 * hooks: a session or an organization key); routes with that hook publish it (see below).
 */
export function publishSecurity<Hook extends object>(hook: Hook, security: Security): Hook {
  securityOfHook.set(hook, security)
  return hook
}

/** The security a route's hooks stand for: CSRF's over the session's, else the first declared. */
function securityOf(hooks: unknown[]): Security | undefined {
  if (hooks.includes(requireCsrf)) return CSRF_SECURITY
  return hooks.map((hook) => securityOfHook.get(hook as object)).find((security) => security !== undefined)
}

/**
 * Gives the app its session checks (once, by the auth area, before the guarded routes are
 * registered), and publishes each route's OpenAPI security from its guarding hooks: S+C routes
 * `CSRF_SECURITY`, S routes `SESSION_SECURITY`, /v1 routes the tenant's. A route that also writes
 * another by hand fails to register, so the document cannot disagree with the hooks.
 */
export function provideSessionChecks(app: App, checks: SessionChecks) {
  app.decorate(CHECKS, checks)
  app.addHook('onRoute', (route) => {
    const security = securityOf([route.onRequest ?? []].flat())
    if (!security) return
    const given = (route.schema as { security?: unknown } | undefined)?.security
    if (given !== undefined && JSON.stringify(given) !== JSON.stringify(security))
      throw new Error(`${route.method} ${route.url}: its schema's security disagrees with its guarding hooks`)
    route.schema = { ...route.schema, security } as typeof route.schema
  })
}

/** The session of a request that passed `requireSession`. */
export function sessionOf(request: FastifyRequest): ConsoleSession {
  if (!request.consoleSession) throw rentalError('unauthenticated', 'sign in first: no live console session')
  return request.consoleSession
}
