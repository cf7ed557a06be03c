// @ts-check
// The client's signing key: an Ed25519 key pair made with WebCrypto, its private half not
// extractable, kept in this browser's IndexedDB. Its did:key is what the rental knows the client by;
// what it signs is the JCS (RFC 8785) canonical form of a body, as the server verifies it.
import { base58, base64urlnopad } from '@scure/base'
import canonicalize from 'canonicalize'

const DB = 'rental-console'
const STORE = 'keys'
const ID = 'client'
/** The multicodec prefix of an Ed25519 public key (0xed, varint) in a did:key. */
const ED25519_PUB = [0xed, 0x01]

const request = (req) =>
  new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })

function open() {
  const req = indexedDB.open(DB, 1)
  req.onupgradeneeded = () => req.result.createObjectStore(STORE)
  return request(req)
}

async function stored(id = ID) {
  const db = await open()
  try {
    return await request(db.transaction(STORE).objectStore(STORE).get(id))
  } finally {
    db.close()
  }
}

/** Whether this browser can make and keep the key (WebCrypto Ed25519 and IndexedDB). */
export async function supported() {
  if (!globalThis.indexedDB || !globalThis.crypto?.subtle) return false
  try {
    await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify'])
    return true
  } catch {
    return false
  }
}

export async function didOf(publicKey) {
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', publicKey))
  return `did:key:z${base58.encode(new Uint8Array([...ED25519_PUB, ...raw]))}`
}

const META = 'client-meta'

/** The key this browser holds, `{did, pair, backedUpAt}` (backedUpAt null when it has no backup), or null. */
export async function currentKey() {
  const pair = await stored()
  if (!pair) return null
  const meta = await stored(META)
  return { did: await didOf(pair.publicKey), pair, backedUpAt: meta?.backed_up_at ?? null }
}

/** Keeps the pair (its private half not extractable) and what is known of its backup, replacing any. */
export async function keep(pair, meta = {}) {
  const db = await open()
  try {
    const tx = db.transaction(STORE, 'readwrite')
    tx.objectStore(STORE).put(pair, ID)
    tx.objectStore(STORE).put(meta, META)
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve
      tx.onerror = () => reject(tx.error)
    })
  } finally {
    db.close()
  }
}

/** The key this browser holds, made (non-extractable, without a backup) and kept on first use. */
export async function ensureKey() {
  const existing = await currentKey()
  if (existing) return existing
  const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify'])
  await keep(pair)
  return { did: await didOf(pair.publicKey), pair, backedUpAt: null }
}

/** What signing a body means: its canonical text and bytes, and their SHA-256 in hex. */
export async function canonicalOf(body) {
  const text = canonicalize(body)
  const bytes = new TextEncoder().encode(text)
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
  return { text, bytes, sha256: [...digest].map((b) => b.toString(16).padStart(2, '0')).join('') }
}

/** The base64url Ed25519 signature over the body's JCS bytes. */
export async function signBody(key, body) {
  const { bytes } = await canonicalOf(body)
  const signature = await crypto.subtle.sign({ name: 'Ed25519' }, key.pair.privateKey, bytes)
  return base64urlnopad.encode(new Uint8Array(signature))
}
