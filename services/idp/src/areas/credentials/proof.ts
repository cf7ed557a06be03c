import { b64uEncode } from '@svc/trust/base64url'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  importJWK,
  type JWK,
  jwtVerify,
  type ProtectedHeaderParameters,
} from 'jose'
import { hasPrivateMembers } from '../../oauth/jwk.ts'
import { PROOF_ALGS, PROOF_TYP } from './metadata.ts'
import { idpError } from '../../errors.ts'

/** A key proof may be this old (OpenID4VCI Appendix F.1: `iat`), and this far in the future. */
const PROOF_MAX_AGE_S = 300
const CLOCK_SKEW_S = 60

/** The key a credential is bound to: a did:key, or a JWK (named by its RFC 9278 thumbprint URI). */
export type Holder =
  { method: 'did:key'; id: string; jwk: JWK } | { method: 'jwk'; id: string; jwk: JWK; jkt: string }

export const invalidProof = (message: string) => idpError('invalid_proof', message)

/** Ed25519 (OKP) for EdDSA, P-256 for ES256: a key must be of the kind its algorithm signs with. */
const KEY_OF_ALG: Record<string, { kty: string; crv: string }> = {
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
  ES256: { kty: 'EC', crv: 'P-256' },
}

/** The proof's key, from exactly one of `jwk` or a did:key `kid` (never both, never neither). */
async function proofKey(header: ProtectedHeaderParameters): Promise<Holder> {
  const named = (['jwk', 'kid', 'x5c', 'trust_chain', 'key_attestation'] as const).filter(
    (member) => (header as Record<string, unknown>)[member] !== undefined,
  )
  if (named.length !== 1 || (named[0] !== 'jwk' && named[0] !== 'kid'))
    throw invalidProof('name the key with exactly one of jwk or kid (a did:key URL)')
  const expected = KEY_OF_ALG[header.alg!]!
  if (header.jwk) {
    const jwk = header.jwk as JWK
    if (typeof jwk !== 'object' || hasPrivateMembers(jwk)) throw invalidProof('jwk must be a public key')
    if (jwk.kty !== expected.kty || jwk.crv !== expected.crv)
      throw invalidProof(`an ${header.alg} proof is signed with a ${expected.kty} ${expected.crv} key`)
    const jkt = await calculateJwkThumbprint(jwk, 'sha256')
    const { kty, crv, x, y } = jwk
    const bare = y === undefined ? { kty, crv, x } : { kty, crv, x, y }
    return { method: 'jwk', id: `urn:ietf:params:oauth:jwk-thumbprint:sha-256:${jkt}`, jwk: bare, jkt }
  }
  const kid = header.kid!
  if (typeof kid !== 'string' || !kid.startsWith('did:key:') || !kid.includes('#'))
    throw invalidProof('kid must be a did:key URL (did:key:z…#z…)')
  let publicKey: Uint8Array
  try {
    publicKey = ed25519FromDidKey(kid)
  } catch (err) {
    throw invalidProof((err as Error).message)
  }
  if (header.alg !== 'EdDSA') throw invalidProof('a did:key proof is signed EdDSA (Ed25519)')
  return {
    method: 'did:key',
    id: kid.split('#')[0]!,
    jwk: { kty: 'OKP', crv: 'Ed25519', x: b64uEncode(publicKey) },
  }
}

/**
 * OpenID4VCI Appendix F.1 and F.4: a key proof is a JWT typed `openid4vci-proof+jwt`, signed
 * EdDSA or ES256 by the key it names, for this credential issuer (`aud`), issued within the last
 * five minutes (`iat`), carrying a `c_nonce`, and with `iss` the wallet's client_id when it named
 * one at the token endpoint (absent for anonymous wallets). Returns the holder and the nonce; the
 * caller spends the nonce.
 */
export async function verifyProof(
  jwt: string,
  expected: { issuer: string; walletClientId?: string },
): Promise<{ holder: Holder; nonce: string }> {
  let header: ProtectedHeaderParameters
  try {
    header = decodeProtectedHeader(jwt)
  } catch {
    throw invalidProof('the proof is not a JWT')
  }
  if (header.typ !== PROOF_TYP) throw invalidProof(`the proof's typ must be ${PROOF_TYP}`)
  if (typeof header.alg !== 'string' || !PROOF_ALGS.includes(header.alg))
    throw invalidProof(`the proof's alg must be one of ${PROOF_ALGS.join(', ')}`)
  const holder = await proofKey(header)
  let payload
  try {
    const key = await importJWK(holder.jwk, header.alg)
    ;({ payload } = await jwtVerify(jwt, key, {
      typ: PROOF_TYP,
      algorithms: [header.alg],
      requiredClaims: ['iat'],
      maxTokenAge: PROOF_MAX_AGE_S,
      clockTolerance: CLOCK_SKEW_S,
    }))
  } catch (err) {
    throw invalidProof(`the proof does not verify: ${(err as Error).message}`)
  }
  if (payload.aud !== expected.issuer)
    throw invalidProof(`the proof's aud must be the credential issuer, ${expected.issuer}`)
  if (expected.walletClientId === undefined && payload.iss !== undefined)
    throw invalidProof('the token was obtained anonymously: the proof carries no iss')
  if (
    expected.walletClientId !== undefined &&
    payload.iss !== undefined &&
    payload.iss !== expected.walletClientId
  )
    throw invalidProof('the proof’s iss must be the client_id the token was obtained with')
  if (typeof payload.nonce !== 'string' || !payload.nonce)
    throw invalidProof('the proof carries no nonce: get a c_nonce from the nonce endpoint')
  return { holder, nonce: payload.nonce }
}
