/**
 * Ed25519 witness cosignatures (https://c2sp.org/tlog-cosignature, `cosignature/v1`): note signatures of type
 * 0x04 over `cosignature/v1\ntime <t>\n` followed by the whole checkpoint text, extension lines included. The
 * signature is the 8-byte big-endian timestamp followed by the 64-byte Ed25519 signature.
 */
import { parseCheckpoint } from './checkpoint.ts'
import { signEd25519, verifyEd25519 } from './ed25519.ts'
import {
  decodeEd25519SignerKey,
  decodeEd25519VerifierKey,
  encodeEd25519Keys,
  type NoteSigner,
  type NoteVerifier,
} from './note.ts'

/** Signature type byte of Ed25519 cosignatures, in key IDs and verifier keys. */
export const COSIGNATURE_TYPE = 0x04

const SIGNATURE_LENGTH = 8 + 64
const MAX_TIMESTAMP = 2n ** 63n - 1n
const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The message a cosigner signs for `checkpointText` at `timestamp` (POSIX seconds). */
export function cosignatureMessage(checkpointText: string, timestamp: number | bigint): Uint8Array {
  const t = BigInt(timestamp)
  if (t < 0n || t > MAX_TIMESTAMP) throw new Error('cosignature timestamp out of range')
  parseCheckpoint(checkpointText)
  return utf8.encode(`cosignature/v1\ntime ${t}\n${checkpointText}`)
}

export function generateCosignerKey(
  name: string,
  seed?: Uint8Array,
): { signerKey: string; verifierKey: string } {
  return encodeEd25519Keys(name, COSIGNATURE_TYPE, seed)
}

/** A signer that cosigns checkpoint texts (it refuses any other text), stamped with `now()` in seconds. */
export function cosignerFromKey(signerKey: string, now = () => Math.floor(Date.now() / 1000)): NoteSigner {
  const { name, keyId, seed } = decodeEd25519SignerKey(signerKey, COSIGNATURE_TYPE)
  return {
    name,
    keyId,
    sign(message) {
      const timestamp = now()
      if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
        throw new Error('cosignature timestamp must be a non-negative integer of seconds')
      }
      const signature = new Uint8Array(SIGNATURE_LENGTH)
      new DataView(signature.buffer).setBigUint64(0, BigInt(timestamp))
      signature.set(signEd25519(seed, cosignatureMessage(strictUtf8.decode(message), timestamp)), 8)
      return signature
    },
  }
}

const timestampBytes = (signature: Uint8Array) =>
  new DataView(signature.buffer, signature.byteOffset, signature.byteLength).getBigUint64(0)

export function cosignatureVerifierFromKey(
  verifierKey: string,
): NoteVerifier & { timestampOf(signature: Uint8Array): number } {
  const { name, keyId, publicKey } = decodeEd25519VerifierKey(verifierKey, COSIGNATURE_TYPE)
  return {
    name,
    keyId,
    verify(message, signature) {
      if (signature.length !== SIGNATURE_LENGTH) return false
      let signed: Uint8Array
      try {
        signed = cosignatureMessage(strictUtf8.decode(message), timestampBytes(signature))
      } catch {
        return false
      }
      return verifyEd25519(publicKey, signed, signature.subarray(8))
    },
    /** The POSIX timestamp of a cosignature (the bytes after the key ID); throws if it is not one. */
    timestampOf(signature) {
      if (signature.length !== SIGNATURE_LENGTH) throw new Error('not an Ed25519 cosignature: wrong length')
      const t = timestampBytes(signature)
      if (t > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('cosignature timestamp too large')
      return Number(t)
    },
  }
}
