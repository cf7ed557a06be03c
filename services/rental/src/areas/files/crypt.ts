import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { Sealer } from '@svc/kit'

/** Plaintext bytes per chunk: each chunk is encrypted and authenticated on its own. */
export const CHUNK_BYTES = 64 * 1024
const TAG_BYTES = 16

/**
 * The service keys that seal files' data keys: the current one (RENTAL_ENCRYPTION_KEY) seals new
 * keys; retired ones (RENTAL_ENCRYPTION_KEYS_RETIRED) only open keys sealed before a rotation.
 * A key's id is a fingerprint (the first 16 hex digits of SHA-256 over a label and the key), so
 * the database names the key without holding anything that opens it.
 */
export class KeyRing {
  readonly currentId: string
  readonly #sealers = new Map<string, Sealer>()

  constructor(current: Uint8Array, retired: readonly Uint8Array[] = []) {
    this.currentId = keyIdOf(current)
    this.#sealers.set(this.currentId, new Sealer(current))
    for (const key of retired)
      if (!this.#sealers.has(keyIdOf(key))) this.#sealers.set(keyIdOf(key), new Sealer(key))
  }

  /** A file's data key sealed under the current service key, bound to the file's id. */
  seal(dataKey: Uint8Array, fileId: string): { keyId: string; sealed: Buffer } {
    return {
      keyId: this.currentId,
      sealed: this.#sealers.get(this.currentId)!.seal(dataKey, context(fileId)),
    }
  }

  /** The data key, opened with the service key it was sealed under (throws when that key is not configured). */
  open(keyId: string, sealed: Uint8Array, fileId: string): Buffer {
    const sealer = this.#sealers.get(keyId)
    if (!sealer)
      throw new Error(`the service key ${keyId} is not configured (RENTAL_ENCRYPTION_KEYS_RETIRED)`)
    return sealer.open(sealed, context(fileId))
  }

  /** Whether a key id is one this ring can open. */
  has(keyId: string): boolean {
    return this.#sealers.has(keyId)
  }
}

const context = (fileId: string) => `rental-file-key:${fileId}`

export const keyIdOf = (key: Uint8Array) =>
  `k_${createHash('sha256').update('svc rental service key id\0').update(key).digest('hex').slice(0, 16)}`

export const newDataKey = () => randomBytes(32)

/** The nonce of chunk `index`: 96 bits, the index big-endian (unique: every file has its own key). */
function nonceOf(index: number): Buffer {
  const nonce = Buffer.alloc(12)
  nonce.writeBigUInt64BE(BigInt(index), 4)
  return nonce
}

/** What each chunk's tag also covers: the file, the chunk's place and whether it is the last. */
const aadOf = (fileId: string, index: number, final: boolean) =>
  Buffer.from(`svc.file.chunk.v1|${fileId}|${index}|${final ? 1 : 0}`, 'utf8')

/** One chunk's ciphertext with its GCM tag appended. */
export function sealChunk(key: Buffer, fileId: string, index: number, final: boolean, plain: Buffer): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, nonceOf(index))
  cipher.setAAD(aadOf(fileId, index, final))
  return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()])
}

/** The chunk's plaintext, only once its tag verified (throws otherwise). */
export function openChunk(key: Buffer, fileId: string, index: number, final: boolean, data: Buffer): Buffer {
  if (data.length < TAG_BYTES) throw new Error('chunk shorter than its tag')
  const decipher = createDecipheriv('aes-256-gcm', key, nonceOf(index))
  decipher.setAAD(aadOf(fileId, index, final))
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES))
  return Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()])
}
