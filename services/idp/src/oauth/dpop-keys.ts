import {
  calculateJwkThumbprint,
  EmbeddedJWK,
  type FlattenedJWSInput,
  type JWK,
  type JWSHeaderParameters,
} from 'jose'

type ProofKey = { key: Awaited<ReturnType<typeof EmbeddedJWK>>; jkt: string }

const MAX_KEYS = 1_000
// a client signs proof after proof with one key: importing it once saves most of a proof's check
const known = new Map<string, ProofKey>()

/**
 * The key embedded in a DPoP proof's header (jose's EmbeddedJWK, with all its checks) and its
 * RFC 7638 thumbprint, kept for the exact header `jwk` and `alg` that gave them. Only keys that
 * imported are kept; the proof's signature is still checked every time.
 */
export async function proofKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<ProofKey> {
  const { alg, jwk } = { ...header, ...token.header }
  const id = `${alg} ${JSON.stringify(jwk)}`
  const hit = known.get(id)
  if (hit) return hit
  const key = await EmbeddedJWK(header, token)
  const entry = { key, jkt: await calculateJwkThumbprint(jwk as JWK, 'sha256') }
  if (known.size >= MAX_KEYS) known.delete(known.keys().next().value!)
  known.set(id, entry)
  return entry
}
