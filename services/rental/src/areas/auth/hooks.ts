import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { rentalError } from '../../errors.ts'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { RentalDb } from '../../db.ts'
import {
  type ConsoleSession,
  CSRF_HEADER,
  requireCsrf,
  requireSession,
  type SessionChecks,
  type StepUpWhen,
} from '../../http/session.ts'
import { type AccessTokens, presentedToken } from './bearer.ts'
import { stepUpGuard, type StepUpRules } from './step-up-guard.ts'
import { endSessionsOf, liveSession } from './store.ts'
import { asMembership } from '../orgs/index.ts'

/** The console session cookie: a random id; the database keeps only its SHA-256. */
export const SESSION_COOKIE = 'rental_session'

export const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest()

export type { ConsoleSession } from '../../http/session.ts'

/**
 * Sessions and CSRF tokens. A CSRF token is the HMAC of the session's cookie id under a key
 * derived from RENTAL_ENCRYPTION_KEY: `GET /api/me` can show it again without storing it, and the
 * database keeps only its SHA-256, compared in constant time.
 */
export class ConsoleSessions implements SessionChecks {
  readonly #csrfKey: Buffer
  #accessTokens: AccessTokens | undefined

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
      membership: row.membership && asMembership(row.membership),
    }
  }

  /** Ends every session of `subject` (a member removed from its organization signs in again). */
  async endAllOf(subject: string): Promise<number> {
    return endSessionsOf(this.db, { subject }, this.now())
  }

  /** From now on the signed-in routes also take the idp's access tokens (the auth area, at its mount). */
  acceptAccessTokens(tokens: AccessTokens) {
    this.#accessTokens = tokens
  }

  /**
   * The session check behind `requireSession` (http/session.ts): 401 without a live session. A
   * request with `Authorization: Bearer` or `DPoP` is authenticated by that token alone, its cookie
   * ignored (bearer.ts): the token wins, so a client's token is never mixed with a browser's session.
   */
  async checkSession(request: FastifyRequest) {
    const presented = presentedToken(request)
    if (presented) {
      if (!this.#accessTokens) throw rentalError('unauthenticated', 'access tokens are not taken here')
      request.consoleSession = await this.#accessTokens.authenticate(request, presented)
      return
    }
    const session = await this.find(request)
    if (!session)
      throw rentalError(
        'unauthenticated',
        'sign in first: no live console session or access token',
        // RFC 6750 §3.1 and RFC 9728 §5.1: no error code, and where a program learns how to get a token
        this.#accessTokens?.challengeForNone() ?? {},
      )
    request.consoleSession = session
  }

  /**
   * The CSRF check behind `requireCsrf`: 403 `csrf_failed` unless the header holds the session's
   * token. A request authenticated by an access token needs none: a browser never adds the
   * `Authorization` header to a forged cross-site request, so the token is itself the proof.
   */
  async checkCsrf(request: FastifyRequest) {
    const session = request.consoleSession
    const given = request.headers[CSRF_HEADER]
    if (!session) throw rentalError('unauthenticated', 'sign in first: no live console session')
    if (session.token) return
    if (typeof given !== 'string' || given.length === 0 || given.length > 200)
      throw rentalError('csrf_failed', `the ${CSRF_HEADER} header is missing`)
    if (!timingSafeEqual(sha256(given), session.csrfHash))
      throw rentalError('csrf_failed', `the ${CSRF_HEADER} header does not match the session's CSRF token`)
  }

  /** The step-up check behind `route.stepUp`: a recent second factor when the rules are on and `when` says so. */
  async checkStepUp(request: FastifyRequest, when?: StepUpWhen) {
    const rules = this.options.stepUp ?? { enabled: false, maxAgeS: 0 }
    await stepUpGuard(rules, () => this.now(), when)(request)
  }

  /** The `onRequest` hooks of S and S+C routes (the same functions on every app: hooks recognise them). */
  readonly requireSession = requireSession
  readonly requireCsrf = requireCsrf
}
