import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { AppError, type Kv } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { hasPrivateMembers } from './jwk.ts'
import { type JWK, jwtVerify } from 'jose'
import { proofKey } from './dpop-keys.ts'

/** The algorithms a DPoP proof may use (discovery: dpop_signing_alg_values_supported). */
export const DPOP_ALGS = ['ES256', 'EdDSA', 'RS256', 'PS256']
/** A proof is fresh for a minute either side of its iat; its jti is remembered a little longer. */
const PROOF_WINDOW_S = 60
/** Server nonces change every five minutes; the current and the previous one are accepted. */
const NONCE_WINDOW_MS = 300_000

export interface DpopDeps {
  kv: Kv
  issuer: string
  /** The secret behind server nonces: the same on every instance, so any one can check another's. */
  nonceKey: Buffer
}

const b64u = (bytes: Buffer) => bytes.toString('base64url')
const sha256 = (text: string) => createHash('sha256').update(text).digest()

function nonceFor(key: Buffer, window: number) {
  const slot = Buffer.alloc(8)
  slot.writeBigUInt64BE(BigInt(window))
  return b64u(Buffer.concat([slot, createHmac('sha256', key).update(slot).digest().subarray(0, 16)]))
}

/** RFC 9449 §8: the nonce the server gives now (sent in `DPoP-Nonce` on every DPoP answer). */
export const currentNonce = (deps: DpopDeps) =>
  nonceFor(deps.nonceKey, Math.floor(Date.now() / NONCE_WINDOW_MS))

function nonceIsFresh(deps: DpopDeps, nonce: unknown) {
  if (typeof nonce !== 'string') return false
  const window = Math.floor(Date.now() / NONCE_WINDOW_MS)
  return [window, window - 1].some((w) => {
    const expected = Buffer.from(nonceFor(deps.nonceKey, w))
    const given = Buffer.from(nonce)
    return expected.length === given.length && timingSafeEqual(expected, given)
  })
}

export type DpopFailure = 'invalid_dpop_proof' | 'use_dpop_nonce'

export class DpopError extends Error {
  constructor(
    readonly code: DpopFailure,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Checks the request's DPoP proof (RFC 9449 §4.3): one `DPoP` header, a JWT typed `dpop+jwt`
 * signed by the public key in its own header, `htm` and `htu` this request, `iat` within a
 * minute, a `jti` never seen for that key, the server's current nonce, and with an access token
 * its hash in `ath`. Returns the key's thumbprint (`jkt`), or undefined when there is no proof.
 */
export async function checkProof(
  deps: DpopDeps,
  request: FastifyRequest,
  accessToken?: string,
): Promise<string | undefined> {
  const header = request.headers.dpop
  if (header === undefined) return undefined
  if (Array.isArray(header) || header.includes(','))
    throw new DpopError('invalid_dpop_proof', 'send exactly one DPoP proof')
  let payload
  let jwk: JWK
  let jkt = ''
  try {
    const verified = await jwtVerify(
      header,
      async (protectedHeader, token) => {
        const embedded = await proofKey(protectedHeader, token)
        jkt = embedded.jkt
        return embedded.key
      },
      {
        typ: 'dpop+jwt',
        algorithms: DPOP_ALGS,
        requiredClaims: ['jti', 'htm', 'htu', 'iat'],
        maxTokenAge: PROOF_WINDOW_S,
        clockTolerance: PROOF_WINDOW_S,
      },
    )
    payload = verified.payload
    jwk = verified.protectedHeader.jwk!
  } catch (err) {
    throw new DpopError('invalid_dpop_proof', `the DPoP proof is invalid: ${(err as Error).message}`)
  }
  if (hasPrivateMembers(jwk))
    throw new DpopError('invalid_dpop_proof', 'the DPoP proof carries a private key')
  if (payload.htm !== request.method)
    throw new DpopError('invalid_dpop_proof', 'htm is not this request’s method')
  const htu = `${deps.issuer}${request.url.split('?')[0]}`
  if (typeof payload.htu !== 'string' || payload.htu.split(/[?#]/)[0] !== htu)
    throw new DpopError('invalid_dpop_proof', `htu must be ${htu}`)
  if (accessToken !== undefined && payload.ath !== b64u(sha256(accessToken)))
    throw new DpopError('invalid_dpop_proof', 'ath is not the hash of the access token')
  if (!nonceIsFresh(deps, payload.nonce))
    throw new DpopError('use_dpop_nonce', 'use the server’s DPoP nonce (DPoP-Nonce header)')
  if (!(await deps.kv.setIfAbsent(`dpop-jti:${jkt}:${String(payload.jti)}`, '1', 3 * PROOF_WINDOW_S * 1000)))
    throw new DpopError('invalid_dpop_proof', 'the DPoP proof was already used (jti replayed)')
  return jkt
}

/** At the token endpoint (RFC 9449 §5, §8): errors in RFC 6749 form, with a fresh nonce. */
export async function tokenEndpointProof(deps: DpopDeps, request: FastifyRequest) {
  try {
    return await checkProof(deps, request)
  } catch (err) {
    if (!(err instanceof DpopError)) throw err
    throw new AppError(400, err.code, err.message, { 'dpop-nonce': currentNonce(deps) })
  }
}
