/**
 * Who calls the agents: a client of the idp with an RFC 9068 access token whose audience is this
 * service (client credentials with `resource` = AGENTS_URL, RFC 8707). The token is checked against
 * the idp's JWKS (found by discovery, cached by jose); the caller is its `client_id`, and an agent's
 * tasks are its caller's alone.
 */
import type { User } from '@a2a-js/sdk/server'
import { AppError } from '@svc/kit'
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose'

/** The authenticated caller: an idp client, named by its `client_id`. */
export class Caller implements User {
  constructor(readonly clientId: string) {}
  get isAuthenticated() {
    return true
  }
  get userName() {
    return this.clientId
  }
}

/** A refusal of the caller's credentials (HTTP 401, RFC 6750 §3.1 `invalid_token` when one was given). */
export class Unauthenticated extends Error {
  constructor(
    message: string,
    readonly tokenGiven: boolean,
  ) {
    super(message)
  }
}

const ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA']
const DISCOVERY_TIMEOUT_MS = 5_000

export interface CallerVerifierOptions {
  /** The idp's issuer URL (IDP_URL). */
  issuer: string
  /** This service's public base URL (AGENTS_URL): the audience its tokens must name. */
  audience: string
}

export class CallerVerifier {
  #jwks: Promise<JWTVerifyGetKey> | undefined

  constructor(readonly options: CallerVerifierOptions) {}

  /** The idp's keys: its jwks_uri from discovery, fetched once and kept (retried after a failure). */
  #keys(): Promise<JWTVerifyGetKey> {
    this.#jwks ??= (async () => {
      const { issuer } = this.options
      const res = await fetch(`${issuer}/.well-known/oauth-authorization-server`, {
        signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
      })
      if (!res.ok) throw new Error(`the idp's metadata answered ${res.status}`)
      const metadata = (await res.json()) as { issuer?: string; jwks_uri?: string }
      if (metadata.issuer !== issuer || !metadata.jwks_uri)
        throw new Error(`the idp's metadata names another issuer (${metadata.issuer}) or no jwks_uri`)
      return createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: DISCOVERY_TIMEOUT_MS })
    })()
    this.#jwks.catch(() => (this.#jwks = undefined))
    return this.#jwks
  }

  /** The caller of a request with `Authorization: Bearer <access token>`. */
  async verify(authorization: string | undefined): Promise<Caller> {
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization?.trim() ?? '')
    if (!match) {
      const given = authorization !== undefined && authorization.trim() !== ''
      throw new Unauthenticated(
        given ? 'the Authorization header is not a Bearer token' : 'an access token from the idp is required',
        given,
      )
    }
    let keys: JWTVerifyGetKey
    try {
      keys = await this.#keys()
    } catch (err) {
      throw unavailable(err)
    }
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(match[1]!, keys, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        typ: 'at+jwt',
        algorithms: ALGORITHMS,
        requiredClaims: ['exp', 'client_id'],
      }))
    } catch (err) {
      if (err instanceof errors.JWKSTimeout || !(err instanceof errors.JOSEError)) throw unavailable(err)
      throw new Unauthenticated(`the access token is not valid here: ${reason(err)}`, true)
    }
    // a sender-constrained token (RFC 9449) needs its DPoP proof, which this service does not take
    if (payload.cnf !== undefined)
      throw new Unauthenticated('a DPoP-bound access token is not accepted: ask for a Bearer token', true)
    const clientId = payload.client_id
    if (typeof clientId !== 'string' || clientId === '')
      throw new Unauthenticated('the access token names no client_id', true)
    return new Caller(clientId)
  }
}

/** What was wrong with a token, in ASCII (it goes into WWW-Authenticate). */
function reason(err: errors.JOSEError): string {
  if (err instanceof errors.JWTExpired) return 'expired'
  if (err instanceof errors.JWTClaimValidationFailed) return `claim ${err.claim} is wrong`
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'bad signature'
  if (err instanceof errors.JWKSNoMatchingKey) return 'signed by a key the idp does not publish'
  return 'malformed'
}

const unavailable = (err: unknown) =>
  new AppError(503, 'idp_unavailable', `the idp's keys cannot be read now: ${(err as Error).message}`, {
    'retry-after': '5',
  })
