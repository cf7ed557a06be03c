import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { rentalError } from '../../errors.ts'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { RentalDb } from '../../db.ts'
import { stepUpGuard, type StepUpRules, type StepUpWhen } from './step-up-guard.ts'
import { endSessionsOf, liveSession } from './store.ts'

/** The console session cookie: a random id; the database keeps only its SHA-256. */
export const SESSION_COOKIE = 'rental_session'
/** The header every S+C route checks against the session's CSRF token (from `GET /api/me`). */
export const CSRF_HEADER = 'x-csrf-token'

/** OpenAPI security of S and S+C routes (the schemes are declared in app.ts). */
export const SESSION_SECURITY = [{ consoleSession: [] }]
export const CSRF_SECURITY = [{ consoleSession: [], csrfToken: [] }]

export const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest()

/** The signed-in client, as `requireSession` finds it. */
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
  /** The CSRF token of this session (derived from the cookie id, never stored). */
  csrfToken: string
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession: ConsoleSession | null
  }
}

/**
 * Sessions and CSRF tokens. A CSRF token is the HMAC of the session's cookie id under a key
 * derived from RENTAL_ENCRYPTION_KEY: `GET /api/me` can show it again without storing it, and the
 * database keeps only its SHA-256, compared in constant time.
 */
export class ConsoleSessions {
  readonly #csrfKey: Buffer

  constructor(
    readonly db: RentalDb,
    encryptionKey: Buffer,
    readonly options: {
      secureCookies: boolean
      ttlHours: number
      now?: () => Date
      /** The step-up rules of sensitive routes (off when not given). */
      stepUp?: StepUpRules
    },
  ) {
    this.#csrfKey = createHmac('sha256', encryptionKey).update('rental console csrf v1').digest()
  }

  now(): Date {
    return this.options.now?.() ?? new Date()
  }

  /** A new cookie id, with the hashes the session row keeps. */
  mint() {
    const id = randomBytes(32).toString('base64url')
    const csrfToken = this.csrfTokenOf(id)
    return { id, idHash: sha256(id), csrfHash: sha256(csrfToken) }
  }

  csrfTokenOf(id: string): string {
    return createHmac('sha256', this.#csrfKey).update(id).digest('base64url')
  }

  setCookie(reply: FastifyReply, id: string) {
    reply.setCookie(SESSION_COOKIE, id, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: this.options.secureCookies,
      maxAge: this.options.ttlHours * 3600,
    })
  }

  clearCookie(reply: FastifyReply) {
    reply.clearCookie(SESSION_COOKIE, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: this.options.secureCookies,
    })
  }

  /** The live session the request's cookie names, or null. */
  async find(request: FastifyRequest): Promise<ConsoleSession | null> {
    const id = request.cookies[SESSION_COOKIE]
    if (!id || id.length > 100) return null
    const row = await liveSession(this.db, sha256(id), this.now())
    if (!row) return null
    return {
      idHash: row.id_hash,
      subject: row.subject,
      idpSid: row.idp_sid,
      name: row.name,
      email: row.email,
      emailVerified: row.email_verified,
      clientDid: row.client_did,
      acr: row.acr,
      authTime: row.auth_time,
      csrfHash: row.csrf_token_hash,
      csrfToken: this.csrfTokenOf(id),
    }
  }

  /** Ends every session of `subject` (a member removed from its organization signs in again). */
  async endAllOf(subject: string): Promise<number> {
    return endSessionsOf(this.db, { subject }, this.now())
  }

  /** `onRequest` hook of S routes: 401 without a live session; sets `request.consoleSession`. */
  readonly requireSession = async (request: FastifyRequest) => {
    const session = await this.find(request)
    if (!session) throw rentalError('unauthenticated', 'sign in first: no live console session')
    request.consoleSession = session
  }

  /** `onRequest` hook of S+C routes, after `requireSession`: 403 `csrf_failed` unless the header holds the session's token. */
  readonly requireCsrf = async (request: FastifyRequest) => {
    const session = request.consoleSession
    const given = request.headers[CSRF_HEADER]
    if (!session) throw rentalError('unauthenticated', 'sign in first: no live console session')
    if (typeof given !== 'string' || given.length === 0 || given.length > 200)
      throw rentalError('csrf_failed', `the ${CSRF_HEADER} header is missing`)
    if (!timingSafeEqual(sha256(given), session.csrfHash))
      throw rentalError('csrf_failed', `the ${CSRF_HEADER} header does not match the session's CSRF token`)
  }

  /** Route options of S routes (with `schema.security: SESSION_SECURITY`). */
  get session() {
    return { onRequest: [this.requireSession] }
  }

  /**
   * Route options of a sensitive S+C route, next to `sessionAndCsrf` and `can(…)`: a recent second
   * factor (step-up) when the rules are on and `when` (default: always) says so for the request.
   */
  stepUp(when?: StepUpWhen) {
    const rules = this.options.stepUp ?? { enabled: false, maxAgeS: 0 }
    return { preHandler: [stepUpGuard(rules, () => this.now(), when)] }
  }

  /** Route options of S+C routes (with `schema.security: CSRF_SECURITY`). */
  get sessionAndCsrf() {
    return { onRequest: [this.requireSession, this.requireCsrf] }
  }
}

/** The session of a request that passed `requireSession`. */
export function sessionOf(request: FastifyRequest): ConsoleSession {
  if (!request.consoleSession) throw rentalError('unauthenticated', 'sign in first: no live console session')
  return request.consoleSession
}
