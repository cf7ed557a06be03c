/**
 * What the client signs: a body the rental handed over (`{body, hash}`: an SLA, an escrow, a release
 * instruction, an addendum). The signature is Ed25519 over the body's RFC 8785 (JCS) bytes, the same
 * bytes the rental hashed: they are checked against the `hash` it named before anything is signed, so
 * a body changed on the way (or a different serialisation) is refused rather than signed.
 */
import { base64urlnopad, hex } from '@scure/base'
import { canonicalBytes } from '@svc/trust/jcs'
import { SvcError } from './errors.ts'
import type { ClientKey } from './keys.ts'

export interface HandedBody {
  body: unknown
  /** `sha256:<hex>` of the body's JCS bytes, as the rental named it. */
  hash: string
}

/** `sha256:<hex>` of the JCS bytes of `body`: the name the rental gives a signed body. */
export async function bodyHash(body: unknown): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', canonicalBytes(body))
  return `sha256:${hex.encode(new Uint8Array(digest))}`
}

/** The JCS bytes of a handed-over body, once they are checked to be the bytes its hash names. */
export async function bytesToSign(handed: HandedBody): Promise<Uint8Array> {
  const bytes = canonicalBytes(handed.body)
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes))
  if (`sha256:${hex.encode(digest)}` !== handed.hash)
    throw new SvcError('hash_mismatch', 0, `the body is not the one named ${handed.hash}: not signed`)
  return bytes
}

/** The base64url Ed25519 signature of a handed-over body's JCS bytes. */
export async function signBody(key: ClientKey, handed: HandedBody): Promise<string> {
  return base64urlnopad.encode(await key.sign(await bytesToSign(handed)))
}

/** Signs a body that comes without a hash (a release instruction): its JCS bytes as they are. */
export async function signUnnamed(key: ClientKey, body: unknown): Promise<string> {
  return signBody(key, { body, hash: await bodyHash(body) })
}
