// @ts-check
// The signing key's backup. A key can be backed up only as it is made: its private half is
// exported once, encrypted under the person's passphrase (PBKDF2-SHA-256, 600 000 iterations, into
// AES-256-GCM with the did:key as associated data), and imported again non-extractable before it
// is kept. The file is JSON the person keeps; restoring decrypts it, checks the private half
// against the did:key (a signature verified by the public key) and keeps it non-extractable.
import { base58, base64urlnopad } from '@scure/base'
import { currentKey, didOf, keep } from './keys.js'

export const BACKUP_FORMAT = 'svc-rental-client-key/v1'
const ITERATIONS = 600_000
export const MIN_PASSPHRASE = 12

const utf8 = (text) => new TextEncoder().encode(text)

async function aesKey(passphrase, salt, usage) {
  const material = await crypto.subtle.importKey('raw', utf8(passphrase), 'PBKDF2', false, ['deriveKey'])
  return crypto.subtle.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt, iterations: ITERATIONS },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    [usage],
  )
}

/**
 * Makes a new key with its backup: `{did, file, url, body}` (the backup as a download). The key is
 * kept, not yet counted as backed up: that waits until the file is saved (`saveBackup`).
 */
export async function makeKeyWithBackup(passphrase) {
  if (passphrase.length < MIN_PASSPHRASE) throw new Error('passphrase_short')
  const made = await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])
  const did = await didOf(made.publicKey)
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey('pkcs8', made.privateKey))
  const salt = crypto.getRandomValues(new Uint8Array(16))
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: utf8(did) },
    await aesKey(passphrase, salt, 'encrypt'),
    pkcs8,
  )
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, false, ['sign'])
  pkcs8.fill(0)
  const madeAt = new Date().toISOString()
  const backup = {
    format: BACKUP_FORMAT,
    did,
    created_at: madeAt,
    kdf: { name: 'PBKDF2', hash: 'SHA-256', iterations: ITERATIONS, salt: base64urlnopad.encode(salt) },
    cipher: { name: 'AES-256-GCM', iv: base64urlnopad.encode(iv), aad: 'did' },
    ciphertext: base64urlnopad.encode(new Uint8Array(sealed)),
  }
  await keep({ publicKey: made.publicKey, privateKey }, { backed_up_at: null })
  const body = JSON.stringify(backup, null, 2)
  const url = globalThis.URL.createObjectURL(new globalThis.Blob([body], { type: 'application/json' }))
  return { did, url, body, file: `rental-signing-key-${did.slice(-8)}.json` }
}

/** Counts the key this browser holds as backed up, now (its file was saved). */
export async function markBackedUp() {
  const key = await currentKey()
  if (key) await keep(key.pair, { backed_up_at: new Date().toISOString() })
}

/**
 * Saves the backup `made` as a file: through the browser's save dialog where it has one (then
 * 'saved' once written, 'cancelled' when the person closed it), else as a download, which the
 * page cannot see land: 'asking' (the person says whether the file is there).
 */
export async function saveBackup(made) {
  const picker = globalThis.showSaveFilePicker
  if (typeof picker === 'function') {
    let handle
    try {
      handle = await picker({
        suggestedName: made.file,
        types: [{ description: 'JSON', accept: { 'application/json': ['.json'] } }],
      })
    } catch (e) {
      if (/** @type {{ name?: string } | undefined} */ (e)?.name === 'AbortError') return 'cancelled'
      throw e
    }
    const writable = await handle.createWritable()
    await writable.write(made.body)
    await writable.close()
    await markBackedUp()
    return 'saved'
  }
  const link = document.createElement('a')
  link.href = made.url
  link.download = made.file
  link.hidden = true
  document.body.append(link)
  link.click()
  link.remove()
  return 'asking'
}

/** The public key a did:key names, as a WebCrypto key. */
async function publicKeyOf(did) {
  const bytes = did.startsWith('did:key:z') ? base58.decode(did.slice('did:key:z'.length)) : null
  if (!bytes || bytes.length !== 34 || bytes[0] !== 0xed || bytes[1] !== 0x01)
    throw new Error('backup_invalid')
  return crypto.subtle.importKey('raw', bytes.slice(2), { name: 'Ed25519' }, true, ['verify'])
}

/** Restores a key from its backup's text and passphrase, replacing the one kept here; its did:key. */
export async function restoreKey(text, passphrase) {
  let backup
  try {
    backup = JSON.parse(text)
  } catch {
    throw new Error('backup_invalid')
  }
  if (backup?.format !== BACKUP_FORMAT || typeof backup.ciphertext !== 'string' || !backup.kdf?.salt)
    throw new Error('backup_invalid')
  const publicKey = await publicKeyOf(backup.did)
  let pkcs8
  try {
    pkcs8 = new Uint8Array(
      await crypto.subtle.decrypt(
        {
          name: 'AES-GCM',
          iv: new Uint8Array(base64urlnopad.decode(backup.cipher.iv)),
          additionalData: utf8(backup.did),
        },
        await aesKey(passphrase, base64urlnopad.decode(backup.kdf.salt), 'decrypt'),
        new Uint8Array(base64urlnopad.decode(backup.ciphertext)),
      ),
    )
  } catch {
    throw new Error('backup_passphrase')
  }
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, false, ['sign'])
  pkcs8.fill(0)
  const probe = utf8(`restore ${backup.did}`)
  const signature = await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, probe)
  if (!(await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, signature, probe)))
    throw new Error('backup_invalid')
  await keep({ publicKey, privateKey }, { backed_up_at: backup.created_at ?? new Date().toISOString() })
  return backup.did
}
