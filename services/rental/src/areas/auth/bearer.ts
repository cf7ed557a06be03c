import { createHash } from 'node:crypto'
import type { Kv } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { errors as joseErrors, jwtVerify } from 'jose'
import * as oidc from 'openid-client'
import { rentalError, rentalErrors } from '../../errors.ts'
import type { ConsoleSession } from '../../http/session.ts'
import { checkDpopProof, DPOP_ALGS, DpopProofError } from './dpop.ts'
import type { IdpLink } from './idp-link.ts'

/** RFC 9728 §3: where the rental publishes its metadata as a protected resource (routes.ts). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource'

/** How long the idp's introspection answer about a token is believed: the bound on revocation. */
export const INTROSPECTION_CACHE_MS = 5_000
const CACHE_LIMIT = 10_000
const TOKEN_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA']
const CREDENTIAL = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i

export type TokenScheme = 'Bearer' | 'DPoP'

/** The token a request presents in `Authorization` (RFC 6750 §2.1, RFC 9449 §7.1), or null without one. */
export function presentedToken(request: FastifyRequest): { scheme: TokenScheme; token: string } | null {
  const header = request.headers.authorization
  if (typeof header !== 'string' || !/^(bearer|dpop)(\s|$)/i.test(header)) return null
  const match = header.length <= 8000 ? CREDENTIAL.exec(header.trim()) : null
  const scheme: TokenScheme = /^dpop/i.test(header) ? 'DPoP' : 'Bearer'
  if (!match) throw refusal(scheme, 'invalid_request', 'the Authorization header holds no access token')
  return { scheme, token: match[2]! }
}

/** Printable ASCII without `"` and `\` (RFC 6750 §3: the characters `error_description` may hold). */
const headerText = (text: string) =>
  text
    .replace(/[‘’]/g, "'")
    .replace(/["\\]/g, "'")
    .replace(/[^\x20-\x7e]/g, '?')

/** RFC 6750 §3 / RFC 9449 §7.1: a challenge in the scheme the client used. */
export function challenge(scheme: TokenScheme, params: Record<string, string>): string {
  const all = scheme === 'DPoP' ? { ...params, algs: DPOP_ALGS.join(' ') } : params
  return `${scheme} ${Object.entries(all)
    .map(([name, value]) => `${name}="${name === 'error_description' ? headerText(value) : value}"`)
    .join(', ')}`
}

/**
 * 401 `unauthenticated` (400 for a malformed header) with the RFC 6750 / RFC 9449 challenge,
 * naming the resource's metadata (RFC 9728 §5.1) when the base URL is given.
 */
function refusal(scheme: TokenScheme, error: string, message: string, baseUrl?: string) {
  const metadata: Record<string, string> = baseUrl
    ? { resource_metadata: `${baseUrl}${RESOURCE_METADATA_PATH}` }
    : {}
  const headers = {
    'www-authenticate': challenge(scheme, { error, error_description: message, ...metadata }),
  }
  return rentalError(error === 'invalid_request' ? 'invalid_request' : 'unauthenticated', message, headers)
}

/** What the idp's introspection said about a token, and until when we believe it. */
interface Introspected {
  active: boolean
  did: string | null
  /** The person's email and whether the idp verified it (shown for a first-party token with the `email` scope). */
  email: string | null
  emailVerified: boolean
  until: number
}

export interface AccessTokenDeps {
  link: IdpLink
  kv: Kv
  /** This service's base URL: the RFC 8707 resource its tokens name as `aud`, and DPoP's `htu` base. */
  baseUrl: string
  now: () => Date
  /** Whether the idp subject has joined an organization here (at a console sign-in, or a first token). */
  hasJoined(subject: string): Promise<boolean>
  /** The console's first-sign-in provisioning: an invitation to the email taken, or an organization made. */
  join(who: { subject: string; email: string | null; emailVerified: boolean }): Promise<unknown>
}

const why = (err: unknown) => {
  if (err instanceof joseErrors.JWTExpired) return 'the access token has expired'
  if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud')
    return 'the access token is for another audience than this service (aud)'
  if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'iss')
    return 'the access token is not from our identity provider (iss)'
  return `the access token is invalid: ${(err as Error).message}`
}

/**
 * The idp's access tokens (RFC 9068 JWTs, `typ: at+jwt`) standing in for a console session on
 * the signed-in routes. A token is checked against the idp's JWKS (jose caches it and fetches it
 * again for an unknown `kid`), for `iss`, `exp` and `aud` = this service's resource; a DPoP-bound
 * one (`cnf.jkt`) needs its proof; then the idp's introspection (RFC 7662), believed for
 * INTROSPECTION_CACHE_MS, says it still stands (not revoked, its sign-in and account live).
 */
export class AccessTokens {
  readonly #introspected = new Map<string, Introspected>()

  constructor(private readonly deps: AccessTokenDeps) {}

  /** The resource identifier the idp puts in `aud` for this service. */
  get resource(): string {
    return this.deps.baseUrl
  }

  /** The challenges of a request with no credential at all: both schemes, naming our metadata. */
  challengeForNone(): Record<string, string> {
    const metadata = { resource_metadata: `${this.deps.baseUrl}${RESOURCE_METADATA_PATH}` }
    return {
      'www-authenticate': `${challenge('Bearer', metadata)}, ${challenge('DPoP', metadata)}`,
    }
  }

  /** The session a valid token stands for; 401 (or 403 for a subject that never joined) otherwise. */
  async authenticate(request: FastifyRequest, presented: { scheme: TokenScheme; token: string }) {
    const { scheme, token } = presented
    const invalid = (message: string) => refusal(scheme, 'invalid_token', message, this.deps.baseUrl)
    const config = this.deps.link.configuration()
    let claims: Record<string, unknown>
    try {
      ;({ payload: claims } = await jwtVerify(token, this.deps.link.jwks(), {
        issuer: config.serverMetadata().issuer,
        audience: this.resource,
        typ: 'at+jwt',
        algorithms: TOKEN_ALGS,
        requiredClaims: ['exp', 'iat', 'sub', 'jti', 'client_id'],
        currentDate: this.deps.now(),
        clockTolerance: 5,
      }))
    } catch (err) {
      throw invalid(why(err))
    }
    const jkt = (claims.cnf as { jkt?: unknown } | undefined)?.jkt
    if (typeof jkt === 'string') {
      if (scheme !== 'DPoP') throw invalid('this access token is bound to a DPoP key: use the DPoP scheme')
      try {
        await checkDpopProof(this.deps, request, token, jkt)
      } catch (err) {
        if (!(err instanceof DpopProofError)) throw err
        throw refusal('DPoP', 'invalid_dpop_proof', err.message, this.deps.baseUrl)
      }
    } else if (scheme === 'DPoP')
      throw invalid('this access token is not bound to a DPoP key: use the Bearer scheme')
    if (typeof claims.sid !== 'string')
      throw invalid('this access token was issued to a client for itself: there is no signed-in person')
    const standing = await this.#introspect(token, claims)
    if (!standing.active)
      throw invalid('the access token was revoked, or the sign-in or account behind it has ended')
    const subject = String(claims.sub)
    if (!(await this.deps.hasJoined(subject))) {
      // the person's first visit, by token: joined as at a first console sign-in, from the email the idp verified
      if (!standing.email || !standing.emailVerified)
        throw rentalError(
          'forbidden',
          `this person has no organization here yet, and the token names no verified email to make one by (ask for the email scope), so sign in to the console once first (${this.deps.baseUrl}/console): an organization is made, or an invitation taken, at the first sign-in`,
        )
      await this.deps.join({ subject, email: standing.email, emailVerified: true })
    }
    const session: ConsoleSession = {
      idHash: createHash('sha256')
        .update(`access-token:${String(claims.jti)}`)
        .digest(),
      subject,
      idpSid: claims.sid,
      name: null,
      email: standing.email,
      emailVerified: standing.emailVerified,
      clientDid: standing.did,
      acr: typeof claims.acr === 'string' ? claims.acr : null,
      authTime: typeof claims.auth_time === 'number' ? new Date(claims.auth_time * 1000) : null,
      csrfHash: Buffer.alloc(0),
      csrfToken: '',
      token: {
        scheme,
        clientId: String(claims.client_id),
        expiresAt: new Date(Number(claims.exp) * 1000),
      },
    }
    return session
  }

  /** The idp's introspection of the token (as the console's client), from the cache while fresh. */
  async #introspect(token: string, claims: Record<string, unknown>): Promise<Introspected> {
    const key = createHash('sha256').update(token).digest('base64url')
    const now = Date.now()
    const cached = this.#introspected.get(key)
    if (cached && cached.until > now) return cached
    let answer: oidc.IntrospectionResponse
    try {
      answer = await oidc.tokenIntrospection(this.deps.link.configuration(), token)
    } catch (err) {
      throw rentalErrors.errorWith(
        502,
        'idp_unavailable',
        `the identity provider could not confirm the access token: ${(err as Error).message}`,
      )
    }
    const until = Math.min(now + INTROSPECTION_CACHE_MS, Number(claims.exp) * 1000)
    const email = typeof answer.email === 'string' && answer.email.length <= 500 ? answer.email : null
    const standing = {
      active: answer.active === true && answer.sub === claims.sub,
      did: typeof answer.did === 'string' ? answer.did : null,
      email,
      // verified only when the idp says so for that same email (as at the console's sign-in)
      emailVerified: email !== null && answer.email_verified === true,
      until,
    }
    if (this.#introspected.size >= CACHE_LIMIT) this.#forgetStale(now)
    this.#introspected.set(key, standing)
    return standing
  }

  #forgetStale(now: number) {
    for (const [key, entry] of this.#introspected) if (entry.until <= now) this.#introspected.delete(key)
    // still full: the oldest go (a Map keeps insertion order)
    for (const key of this.#introspected.keys()) {
      if (this.#introspected.size < CACHE_LIMIT) break
      this.#introspected.delete(key)
    }
  }
}
