import { ed25519FromDidKey } from '@svc/trust/did-key'
import { Type } from 'typebox'

/** The one pattern of a did:key in an API schema: multibase base58btc, as every key type the platform uses. */
export const DID_KEY_PATTERN = '^did:key:z[1-9A-HJ-NP-Za-km-z]{40,60}$'

/** A did:key in a route schema. */
export const DidKey = (options: { description?: string } = {}) =>
  Type.String({ pattern: DID_KEY_PATTERN, ...options })

/** True when `did` is a did:key of an Ed25519 key (the pattern says did:key; this says which key). */
export function isEd25519DidKey(did: string): boolean {
  try {
    ed25519FromDidKey(did)
    return true
  } catch {
    return false
  }
}
