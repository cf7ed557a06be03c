import { createHash, randomBytes } from 'node:crypto'
import type { Kv } from '@svc/kit'

/** How long a c_nonce may wait for its credential request (OpenID4VCI §7). */
export const C_NONCE_TTL_S = 300

const key = (nonce: string) => `vci-nonce:${createHash('sha256').update(nonce).digest('base64url')}`

/**
 * A fresh c_nonce: 256 random bits, kept in the kv (shared through Redis, so any instance can
 * check it) under its SHA-256 for five minutes.
 */
export async function issueNonce(kv: Kv) {
  const nonce = randomBytes(32).toString('base64url')
  await kv.set(key(nonce), '1', C_NONCE_TTL_S * 1000)
  return nonce
}

/**
 * Spends a c_nonce: true once for a nonce we issued that has not expired. Of two concurrent
 * requests with the same nonce, the kv's set-if-absent lets exactly one through.
 */
export async function spendNonce(kv: Kv, nonce: string) {
  const k = key(nonce)
  if ((await kv.get(k)) === null) return false
  const first = await kv.setIfAbsent(`${k}:spent`, '1', C_NONCE_TTL_S * 1000)
  if (first) await kv.delete(k)
  return first
}
