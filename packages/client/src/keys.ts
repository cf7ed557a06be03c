/**
 * The client's Ed25519 signing key, on WebCrypto (Node 20 and browsers alike). Its backup is the
 * web console's file (services/rental/console/key-backup.js, `svc-rental-client-key/v1`): the PKCS#8
 * private key under AES-256-GCM with the did:key as associated data, the AES key from the passphrase
 * by PBKDF2-SHA-256 (600 000 iterations). A console backup restores here, and one made here restores
 * in the console.
 */
import type { webcrypto } from 'node:crypto'
import { base64urlnopad } from '@scure/base'
import { didKeyFromEd25519, ed25519FromDidKey } from '@svc/trust/did-key'
import { SvcError } from './errors.ts'

export const BACKUP_FORMAT = 'svc-rental-client-key/v1'
const ITERATIONS = 600_000
export const MIN_PASSPHRASE = 12
// PKCS#8 of an Ed25519 key (RFC 8410) is this prefix and the 32-byte seed
const PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
])

/** The console's backup file, as JSON. */
export interface KeyBackup {
  format: typeof BACKUP_FORMAT
  did: string
  created_at: string
  kdf: { name: 'PBKDF2'; hash: 'SHA-256'; iterations: number; salt: string }
  cipher: { name: 'AES-256-GCM'; iv: string; aad: 'did' }
  ciphertext: string
}

// the WebCrypto types (the same objects in browsers); a type import only, nothing loaded
type CryptoKey = webcrypto.CryptoKey
type CryptoKeyPair = webcrypto.CryptoKeyPair
type KeyUsage = webcrypto.KeyUsage

const subtle = () => globalThis.crypto.subtle
const utf8 = (text: string) => new TextEncoder().encode(text)
const ED25519 = { name: 'Ed25519' } as const
const invalid = (message: string) => new SvcError('backup_invalid', 0, message)

async function aesKey(passphrase: string, salt: Uint8Array, iterations: number, usage: KeyUsage) {
  const material = await subtle().importKey('raw', utf8(passphrase), 'PBKDF2', false, ['deriveKey'])
  return subtle().deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt, iterations },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    [usage],
  )
}

export class ClientKey {
  private constructor(
    private readonly privateKey: CryptoKey,
    /** The raw 32-byte public key. */
    readonly publicKey: Uint8Array,
    /** The key's did:key: the `client_did` the rental binds the engagement to. */
    readonly did: string,
  ) {}

  static async generate(): Promise<ClientKey> {
    const made = (await subtle().generateKey(ED25519, true, ['sign', 'verify'])) as CryptoKeyPair
    const publicKey = new Uint8Array(await subtle().exportKey('raw', made.publicKey))
    return new ClientKey(made.privateKey, publicKey, didKeyFromEd25519(publicKey))
  }

  /** A key from its 32-byte RFC 8032 seed (what `@svc/trust`'s `Ed25519KeyPair.seed` holds). */
  static async fromSeed(seed: Uint8Array): Promise<ClientKey> {
    if (seed.length !== 32) throw new TypeError('an Ed25519 seed is 32 bytes')
    return ClientKey.fromPkcs8(Uint8Array.from([...PKCS8_PREFIX, ...seed]))
  }

  private static async fromPkcs8(pkcs8: Uint8Array, expectedDid?: string): Promise<ClientKey> {
    const privateKey = await subtle().importKey('pkcs8', pkcs8, ED25519, true, ['sign'])
    const jwk = await subtle().exportKey('jwk', privateKey)
    const publicKey = base64urlnopad.decode(jwk.x ?? '')
    const did = didKeyFromEd25519(publicKey)
    if (expectedDid !== undefined && did !== expectedDid)
      throw invalid(`the backup's key is not the key of ${expectedDid}`)
    return new ClientKey(privateKey, publicKey, did)
  }

  /** A base64url-free Ed25519 signature of `message`. */
  async sign(message: Uint8Array): Promise<Uint8Array> {
    return new Uint8Array(await subtle().sign(ED25519, this.privateKey, message))
  }

  /** The backup file's text (JSON), encrypted under `passphrase`: what `ClientKey.restore` reads back. */
  async backup(passphrase: string): Promise<string> {
    if (passphrase.length < MIN_PASSPHRASE)
      throw new SvcError('passphrase_short', 0, `a passphrase has at least ${MIN_PASSPHRASE} characters`)
    const pkcs8 = new Uint8Array(await subtle().exportKey('pkcs8', this.privateKey))
    const salt = globalThis.crypto.getRandomValues(new Uint8Array(16))
    const iv = globalThis.crypto.getRandomValues(new Uint8Array(12))
    const sealed = await subtle().encrypt(
      { name: 'AES-GCM', iv, additionalData: utf8(this.did) },
      await aesKey(passphrase, salt, ITERATIONS, 'encrypt'),
      pkcs8,
    )
    pkcs8.fill(0)
    const backup: KeyBackup = {
      format: BACKUP_FORMAT,
      did: this.did,
      created_at: new Date().toISOString(),
      kdf: { name: 'PBKDF2', hash: 'SHA-256', iterations: ITERATIONS, salt: base64urlnopad.encode(salt) },
      cipher: { name: 'AES-256-GCM', iv: base64urlnopad.encode(iv), aad: 'did' },
      ciphertext: base64urlnopad.encode(new Uint8Array(sealed)),
    }
    return JSON.stringify(backup, null, 2)
  }

  /**
   * The key of a backup file (the console's or the SDK's). A wrong passphrase is `backup_passphrase`;
   * a file that is not a backup, or whose key is not its did:key, is `backup_invalid`.
   */
  static async restore(text: string, passphrase: string): Promise<ClientKey> {
    let backup: KeyBackup
    try {
      backup = JSON.parse(text) as KeyBackup
    } catch {
      throw invalid('the backup is not JSON')
    }
    if (backup?.format !== BACKUP_FORMAT || typeof backup.ciphertext !== 'string' || !backup.kdf?.salt)
      throw invalid(`not a ${BACKUP_FORMAT} backup`)
    try {
      ed25519FromDidKey(backup.did)
    } catch (err) {
      throw invalid((err as Error).message)
    }
    let pkcs8: Uint8Array
    try {
      pkcs8 = new Uint8Array(
        await subtle().decrypt(
          { name: 'AES-GCM', iv: base64urlnopad.decode(backup.cipher.iv), additionalData: utf8(backup.did) },
          await aesKey(
            passphrase,
            base64urlnopad.decode(backup.kdf.salt),
            backup.kdf.iterations ?? ITERATIONS,
            'decrypt',
          ),
          base64urlnopad.decode(backup.ciphertext),
        ),
      )
    } catch {
      throw new SvcError('backup_passphrase', 0, 'the passphrase does not open this backup')
    }
    try {
      return await ClientKey.fromPkcs8(pkcs8, backup.did)
    } finally {
      pkcs8.fill(0)
    }
  }
}
