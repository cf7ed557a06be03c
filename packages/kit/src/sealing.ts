import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const VERSION = 1

/**
 * Secrets encrypted at rest: AES-256-GCM with a random 96-bit IV. `context` is bound as additional
 * data (say, the row's id), so a sealed value copied to another row does not open.
 * Layout: version (1 byte) || IV (12) || tag (16) || ciphertext.
 */
export class Sealer {
  readonly #key: Buffer

  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new Error('a sealing key is 32 bytes')
    this.#key = Buffer.from(key)
  }

  seal(plaintext: string | Uint8Array, context: string): Buffer {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv)
    cipher.setAAD(Buffer.from(context, 'utf8'))
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()])
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body])
  }

  open(sealed: Uint8Array, context: string): Buffer {
    const bytes = Buffer.from(sealed)
    if (bytes[0] !== VERSION || bytes.length < 29) throw new Error('not a sealed value')
    const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(1, 13))
    decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(bytes.subarray(13, 29))
    return Buffer.concat([decipher.update(bytes.subarray(29)), decipher.final()])
  }
}
