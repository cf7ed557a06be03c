// @ts-check
// A receipt's inclusion in the ledger, checked in this browser with WebCrypto alone: the issuer's
// Ed25519 signature over the receipt's JCS bytes, the RFC 9162 leaf hash of the envelope, the log's
// signed-note verifier key (C2SP signed-note), the checkpoint note's signature by that key
// (C2SP tlog-checkpoint), and the RFC 9162 §2.1.3.2 inclusion proof up to the checkpoint's root.
// The same checks as `npm run verify` (packages/trust/src/bundle.ts), written for the browser.
import { base58, base64 } from '@scure/base'
import canonicalize from 'canonicalize'

const utf8 = new TextEncoder()
const ED25519_DID = 'did:key:z'
const ED25519_PUB = [0xed, 0x01]
const NOTE_ED25519 = 0x01

const sha256 = async (...parts) => {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    all.set(p, at)
    at += p.length
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', all))
}
const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])

async function ed25519Verify(publicKey, message, signature) {
  const key = await crypto.subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify'])
  return crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message)
}

/** The 32-byte public key of an Ed25519 did:key. */
function publicKeyOfDid(did) {
  if (typeof did !== 'string' || !did.startsWith(ED25519_DID)) throw new Error(`${did} is not a did:key`)
  const bytes = base58.decode(did.slice(ED25519_DID.length))
  if (bytes.length !== 34 || bytes[0] !== ED25519_PUB[0] || bytes[1] !== ED25519_PUB[1])
    throw new Error(`${did} is not an Ed25519 did:key`)
  return bytes.slice(2)
}

function base64url(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/')
  return base64.decode(b64 + '='.repeat((4 - (b64.length % 4)) % 4))
}

/** A signed-note verifier key `<name>+<hex key ID>+<base64(0x01 || key)>`, its key ID checked. */
async function verifierOf(key) {
  const [name, hex, b64] = [key.split('+')[0], key.split('+')[1], key.split('+').slice(2).join('+')]
  if (!name || !/^[0-9a-f]{8}$/i.test(hex ?? '') || !b64) throw new Error('the log key is malformed')
  const typeAndKey = base64.decode(b64)
  if (typeAndKey[0] !== NOTE_ED25519 || typeAndKey.length !== 33)
    throw new Error('the log key is not Ed25519')
  const digest = await sha256(utf8.encode(`${name}\n`), typeAndKey)
  const keyId = new DataView(digest.buffer).getUint32(0)
  if (keyId !== parseInt(hex, 16)) throw new Error('the log key’s ID does not match its name and key')
  return { name, keyId, publicKey: typeAndKey.slice(1) }
}

/** The checkpoint in a signed note, once the log key's signature on its text verifies. */
async function openCheckpoint(note, verifier) {
  const split = note.lastIndexOf('\n\n')
  if (split < 0 || !note.endsWith('\n')) throw new Error('the checkpoint is not a signed note')
  const text = note.slice(0, split + 1)
  let verified = 0
  for (const line of note.slice(split + 2, -1).split('\n')) {
    const match = /^\u2014 (\S+) (\S+)$/.exec(line)
    if (!match) throw new Error('the checkpoint has a malformed signature line')
    const bytes = base64.decode(match[2])
    const keyId = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0)
    if (match[1] !== verifier.name || keyId !== verifier.keyId) continue // a witness's cosignature
    if (!(await ed25519Verify(verifier.publicKey, utf8.encode(text), bytes.slice(4))))
      throw new Error('the log’s signature on the checkpoint does not verify')
    verified++
  }
  if (verified === 0) throw new Error('the checkpoint carries no signature of the log key')
  const [origin, size, root] = text.slice(0, -1).split('\n')
  if (!origin || !/^(0|[1-9][0-9]*)$/.test(size ?? '')) throw new Error('the checkpoint is malformed')
  const rootHash = base64.decode(root ?? '')
  if (rootHash.length !== 32) throw new Error('the checkpoint’s root hash is not 32 bytes')
  return { origin, size: Number(size), rootHash }
}

const nodeHash = (left, right) => sha256(Uint8Array.of(1), left, right)

/** RFC 9162 §2.1.3.2: the root the audit path leads to from `leaf` at `index` in a tree of `size`. */
async function rootFromPath(leaf, index, size, path) {
  if (!(index < size) || path.some((p) => p.length !== 32)) return null
  let fn = index
  let sn = size - 1
  let r = leaf
  for (const p of path) {
    if (sn === 0) return null
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r)
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2
        sn = Math.floor(sn / 2)
      }
    } else r = await nodeHash(r, p)
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  }
  return sn === 0 ? r : null
}

/**
 * Checks one receipt (as `GET /api/agents/{did}/receipts` gives it) against the checkpoint note and
 * the log's verifier key, which must be `pinnedKey` when one is given (the key this browser kept). Answers `{ok, checks: [{check, ok, detail}]}`: the checks run in order and
 * stop at the first that fails, whose `detail` says why.
 */
export async function verifyReceipt(receipt, checkpointNote, logKey, pinnedKey) {
  const checks = []
  const step = async (check, run) => {
    if (checks.some((c) => !c.ok)) return
    try {
      checks.push({ check, ok: true, detail: await run() })
    } catch (e) {
      checks.push({ check, ok: false, detail: e.message })
    }
  }
  const must = (condition, message) => {
    if (!condition) throw new Error(message)
  }
  const { envelope } = receipt
  let leaf
  let checkpoint
  let verifier
  await step('signature', async () => {
    const bytes = utf8.encode(canonicalize(envelope.receipt))
    const key = publicKeyOfDid(envelope.receipt.issuer)
    must(
      await ed25519Verify(key, bytes, base64url(envelope.signature)),
      'the issuer’s signature does not verify',
    )
    return envelope.receipt.issuer
  })
  await step('leaf', async () => {
    leaf = await sha256(Uint8Array.of(0), utf8.encode(canonicalize(envelope)))
    must(equal(leaf, base64.decode(receipt.leaf_hash)), 'the envelope does not match its leaf hash')
    return receipt.leaf_hash
  })
  await step('on_ledger', async () => {
    must(receipt.ledger_index !== null && receipt.proof, receipt.problem ?? 'not yet on the ledger')
    return `#${receipt.ledger_index}`
  })
  await step('log_key', async () => {
    must(logKey, 'the rental gave no log key')
    must(
      !pinnedKey || pinnedKey === logKey,
      `the rental names another log key than the one this browser first saw (${pinnedKey})`,
    )
    verifier = await verifierOf(logKey)
    return `${logKey} (${pinnedKey ? 'as first seen by this browser' : 'not pinned'})`
  })
  await step('checkpoint', async () => {
    must(checkpointNote, 'the rental gave no checkpoint')
    checkpoint = await openCheckpoint(checkpointNote, verifier)
    must(
      checkpoint.size === receipt.proof.tree_size,
      `the proof is for a tree of ${receipt.proof.tree_size}, the checkpoint of ${checkpoint.size}`,
    )
    return `${checkpoint.origin} · ${checkpoint.size}`
  })
  await step('inclusion', async () => {
    const path = receipt.proof.hashes.map((h) => base64.decode(h))
    const root = await rootFromPath(leaf, receipt.ledger_index, checkpoint.size, path)
    must(root && equal(root, checkpoint.rootHash), 'the audit path does not lead to the checkpoint’s root')
    return `${path.length} hashes → ${base64.encode(checkpoint.rootHash)}`
  })
  return { ok: checks.length === 6 && checks.every((c) => c.ok), checks }
}
