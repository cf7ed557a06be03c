import { b64Decode, b64uDecode } from './base64url.ts'
import { parseCheckpoint } from './checkpoint.ts'
import { ed25519FromDidKey } from './did-key.ts'
import { verifyEd25519 } from './ed25519.ts'
import { canonicalBytes } from './jcs.ts'
import { leafHash, verifyInclusion } from './merkle.ts'
import { openNote, verifierFromKey } from './note.ts'

/** Everything needed to check a receipt offline: the receipt, its place in the log, and the log's signed word for it. */
export interface ReceiptBundle {
  format: 'svc-receipt-bundle/v1'
  receipt: { issuer: string } & Record<string, unknown>
  signature: string
  index: number
  tree_size: number
  inclusion_proof: string[]
  /** The signed checkpoint note of tree_size (it may carry witness cosignatures). */
  checkpoint: string
  /** The log's signed-note verifier key. */
  log_key: string
}

export interface BundleVerdict {
  ok: boolean
  /** Each check in order, with what it found. */
  checks: Array<{ check: string; ok: boolean; detail: string }>
}

/**
 * Checks a receipt bundle with no network: the issuer's signature, the leaf hash, the log's
 * signature on the checkpoint (against `trustedLogKey` when given, else the bundle's own key,
 * which only proves consistency), the checkpoint's size, and the RFC 9162 inclusion proof.
 */
export function verifyReceiptBundle(bundle: ReceiptBundle, trustedLogKey?: string): BundleVerdict {
  const checks: BundleVerdict['checks'] = []
  const step = (check: string, run: () => string) => {
    if (checks.some((c) => !c.ok)) return
    try {
      checks.push({ check, ok: true, detail: run() })
    } catch (err) {
      checks.push({ check, ok: false, detail: (err as Error).message })
    }
  }
  const must = (condition: boolean, message: string) => {
    if (!condition) throw new Error(message)
  }
  let root: Uint8Array = new Uint8Array()
  step('format', () => {
    must(bundle.format === 'svc-receipt-bundle/v1', `unknown bundle format ${String(bundle.format)}`)
    return bundle.format
  })
  step('receipt signature', () => {
    const key = ed25519FromDidKey(bundle.receipt.issuer)
    must(
      verifyEd25519(key, canonicalBytes(bundle.receipt), b64uDecode(bundle.signature)),
      'the signature does not verify',
    )
    return `signed by ${bundle.receipt.issuer}`
  })
  step('log key', () => {
    if (!trustedLogKey) return `taken from the bundle (${bundle.log_key}); pass the log's key to pin it`
    must(trustedLogKey === bundle.log_key, `the bundle names another log key (${bundle.log_key})`)
    return `pinned: ${trustedLogKey}`
  })
  step('checkpoint signature', () => {
    const opened = openNote(bundle.checkpoint, [verifierFromKey(trustedLogKey ?? bundle.log_key)])
    const checkpoint = parseCheckpoint(opened.text)
    must(
      checkpoint.size === bundle.tree_size,
      `the checkpoint is of size ${checkpoint.size}, not ${bundle.tree_size}`,
    )
    root = checkpoint.rootHash
    return `${checkpoint.origin}, size ${checkpoint.size}, ${opened.verified.length} signature(s) verified`
  })
  step('inclusion proof', () => {
    const hash = leafHash(canonicalBytes({ receipt: bundle.receipt, signature: bundle.signature }))
    const proof = bundle.inclusion_proof.map(b64Decode)
    must(
      verifyInclusion(hash, bundle.index, bundle.tree_size, proof, root),
      'the proof does not lead to the checkpoint root',
    )
    return `index ${bundle.index} of ${bundle.tree_size}`
  })
  return { ok: checks.length === 5 && checks.every((c) => c.ok), checks }
}
