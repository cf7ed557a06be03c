import { base58 } from '@scure/base'

/**
 * did:key for Ed25519 (W3C CCG did:key method): `did:key:` + multibase base58btc ('z') of the multicodec
 * `ed25519-pub` varint prefix (0xed 0x01) followed by the 32-byte public key.
 */
const DID_KEY = 'did:key:'
const ED25519_PUB = 0xed
const PREFIX = new Uint8Array([0xed, 0x01])

export function didKeyFromEd25519(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new Error('an Ed25519 public key is 32 bytes')
  const bytes = new Uint8Array(PREFIX.length + publicKey.length)
  bytes.set(PREFIX)
  bytes.set(publicKey, PREFIX.length)
  return `${DID_KEY}z${base58.encode(bytes)}`
}

/**
 * The Ed25519 public key of a did:key. Accepts `did:key:z6Mk…` and the verification method
 * `did:key:z6Mk…#z6Mk…` (fragment equal to the method-specific id); anything else throws.
 */
export function ed25519FromDidKey(did: string): Uint8Array {
  if (!did.startsWith(DID_KEY)) throw new Error(`not a did:key: ${did}`)
  const [id = '', fragment, ...rest] = did.slice(DID_KEY.length).split('#')
  if (rest.length > 0 || (fragment !== undefined && fragment !== id)) {
    throw new Error(`did:key fragment must repeat the key: ${did}`)
  }
  if (!id.startsWith('z')) throw new Error(`did:key must use multibase base58btc ('z'): ${did}`)
  let bytes: Uint8Array
  try {
    bytes = base58.decode(id.slice(1))
  } catch {
    throw new Error(`did:key is not valid base58btc: ${did}`)
  }
  const [codec, length] = readVarint(bytes)
  if (codec !== ED25519_PUB || length !== PREFIX.length) {
    const name = codec < 0 ? 'malformed' : `0x${codec.toString(16)}`
    throw new Error(`did:key is not an Ed25519 key (multicodec ${name}): ${did}`)
  }
  if (bytes.length !== PREFIX.length + 32) throw new Error(`did:key Ed25519 key is not 32 bytes: ${did}`)
  return bytes.slice(PREFIX.length)
}

/** The verification method id of a did:key: `did:key:<multibase>#<multibase>`. */
export function didKeyVerificationMethod(did: string): string {
  const canonical = didKeyFromEd25519(ed25519FromDidKey(did))
  return `${canonical}#${canonical.slice(DID_KEY.length)}`
}

/** An unsigned LEB128 varint (multicodec), as [value, bytes read]; [-1, 0] when malformed. */
function readVarint(bytes: Uint8Array): [number, number] {
  let value = 0
  for (let i = 0; i < Math.min(bytes.length, 4); i++) {
    const byte = bytes[i]!
    value |= (byte & 0x7f) << (7 * i)
    if ((byte & 0x80) === 0) return [value, i + 1]
  }
  return [-1, 0]
}
