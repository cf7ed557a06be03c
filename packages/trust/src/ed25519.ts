import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto'

/** An Ed25519 key pair as raw bytes: the 32-byte public key and the 32-byte private seed (RFC 8032). */
export interface Ed25519KeyPair {
  publicKey: Uint8Array
  seed: Uint8Array
}

// DER prefixes of PKCS#8 and SPKI for Ed25519 (RFC 8410): the raw 32 bytes follow.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/** Building a KeyObject costs more than checking a signature with it: the recent ones are kept. */
function cached(cache: Map<string, KeyObject>, bytes: Uint8Array, make: () => KeyObject): KeyObject {
  const id = Buffer.from(bytes).toString('base64')
  const key = cache.get(id) ?? make()
  cache.delete(id)
  if (cache.size >= 256) cache.delete(cache.keys().next().value as string)
  cache.set(id, key)
  return key
}
const privateKeys = new Map<string, KeyObject>()
const publicKeys = new Map<string, KeyObject>()

// OpenSSL ignores bytes after the DER structure, so a 33-byte seed would silently sign with its first 32.
function privateKeyOf(seed: Uint8Array) {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes')
  return cached(privateKeys, seed, () =>
    createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' }),
  )
}
const publicKeyOf = (publicKey: Uint8Array) =>
  cached(publicKeys, publicKey, () =>
    createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' }),
  )

export function ed25519FromSeed(seed: Uint8Array): Ed25519KeyPair {
  const spki = createPublicKey(privateKeyOf(seed)).export({ format: 'der', type: 'spki' })
  return { publicKey: new Uint8Array(spki.subarray(SPKI_PREFIX.length)), seed: new Uint8Array(seed) }
}

export function generateEd25519(): Ed25519KeyPair {
  const { privateKey } = generateKeyPairSync('ed25519')
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' })
  return ed25519FromSeed(new Uint8Array(pkcs8.subarray(PKCS8_PREFIX.length)))
}

export function signEd25519(seed: Uint8Array, message: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, privateKeyOf(seed)))
}

/** Verifies an Ed25519 signature; malformed keys or signatures answer false, never throw. */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false
  try {
    return verify(null, message, publicKeyOf(publicKey), signature)
  } catch {
    return false
  }
}
