import { createHash } from 'node:crypto'
import type { Kv } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from 'jose'

/** The algorithms a DPoP proof may use (the idp's `dpop_signing_alg_values_supported`). */
export const DPOP_ALGS = ['ES256', 'EdDSA', 'RS256', 'PS256']
/** A proof's `iat` may be this far from our clock either way; its `jti` is remembered three times as long. */
export const PROOF_WINDOW_S = 60

/** Why a DPoP proof was refused (RFC 9449 §7.1: `invalid_dpop_proof`). */
export class DpopProofError extends Error {}

const b64uSha256 = (text: string) => createHash('sha256').update(text, 'ascii').digest('base64url')

/**
 * RFC 9449 §4.3 and §7.1 at a resource server: exactly one `DPoP` header, a JWT typed `dpop+jwt`
 * signed by the public key in its own header (no private members), `htm` this request's method,
 * `htu` this request's URL (our base URL and path, without query or fragment), `iat` within
 * PROOF_WINDOW_S of now, `ath` the hash of the access token, a `jti` never seen before for that key
 * (the kv, shared by every instance), and the key's thumbprint the token's `cnf.jkt`. No server
 * nonce is asked for (optional at a resource server, RFC 9449 §9).
 */
export async function checkDpopProof(
  deps: { kv: Kv; baseUrl: string; now: () => Date },
  request: FastifyRequest,
  accessToken: string,
  boundJkt: string,
): Promise<void> {
  const header = request.headers.dpop
  if (header === undefined) throw new DpopProofError('a DPoP proof is required (the DPoP header)')
  if (Array.isArray(header) || header.includes(',') || header.length > 8000)
    throw new DpopProofError('send exactly one DPoP proof')
  let payload: Record<string, unknown>
  let jwk: Record<string, unknown>
  try {
    const verified = await jwtVerify(header, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: DPOP_ALGS,
      requiredClaims: ['jti', 'htm', 'htu', 'iat', 'ath'],
      currentDate: deps.now(),
    })
    payload = verified.payload
    jwk = verified.protectedHeader.jwk as Record<string, unknown>
  } catch (err) {
    throw new DpopProofError(`the DPoP proof is invalid: ${(err as Error).message}`)
  }
  if (['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'].some((member) => member in jwk))
    throw new DpopProofError('the DPoP proof carries a private key')
  const iat = typeof payload.iat === 'number' ? payload.iat * 1000 : NaN
  if (!(Math.abs(deps.now().getTime() - iat) <= PROOF_WINDOW_S * 1000))
    throw new DpopProofError(`the DPoP proof's iat is more than ${PROOF_WINDOW_S} seconds from now`)
  if (payload.htm !== request.method) throw new DpopProofError('htm is not this request’s method')
  const htu = `${deps.baseUrl}${request.url.split('?')[0]}`
  if (typeof payload.htu !== 'string' || payload.htu.split(/[?#]/)[0] !== htu)
    throw new DpopProofError(`htu must be ${htu}`)
  if (payload.ath !== b64uSha256(accessToken))
    throw new DpopProofError('ath is not the hash of the access token')
  const jkt = await calculateJwkThumbprint(jwk, 'sha256')
  if (jkt !== boundJkt)
    throw new DpopProofError('the DPoP proof is signed by another key than the token is bound to')
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 200)
    throw new DpopProofError('the DPoP proof has no valid jti')
  const fresh = await deps.kv.setIfAbsent(
    `dpop-jti:${jkt}:${b64uSha256(payload.jti)}`,
    '1',
    3 * PROOF_WINDOW_S * 1000,
  )
  if (!fresh) throw new DpopProofError('the DPoP proof was already used (jti replayed)')
}
