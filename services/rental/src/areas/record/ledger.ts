import { b64Decode, b64Encode } from '@svc/trust/base64url'
import { parseCheckpoint } from '@svc/trust/checkpoint'
import { verifyInclusion } from '@svc/trust/merkle'
import { openNote, verifierFromKey } from '@svc/trust/note'

/** The log key as `GET /v1/key` gives it. */
export interface LogKey {
  origin: string
  verifier_key: string
  did: string
}

/** The ledger's latest checkpoint, checked against the log key. */
export interface CheckpointView {
  note: string
  origin: string
  size: number
  root_hash: string
  verified: boolean
}

/** What the ledger says now: reachable or not, and when it is, its key and latest checkpoint. */
export type LedgerSnapshot =
  | { reachable: true; url: string; key: LogKey; checkpoint: CheckpointView; root: Uint8Array }
  | { reachable: false; url: string; error: string }

export interface InclusionCheck {
  proof: { tree_size: number; hashes: string[] } | null
  verified: boolean
  problem?: string
}

const TIMEOUT_MS = 3_000

/**
 * Reads the ledger's public API (no writer token): the log key, the latest checkpoint and RFC 9162
 * inclusion proofs. The key is pinned on first sight for the life of the process, so a ledger that
 * later serves another key fails verification instead of being believed.
 */
export class LedgerReader {
  #pinned: LogKey | undefined

  constructor(readonly url: string) {}

  async #get(path: string): Promise<Response> {
    const res = await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(TIMEOUT_MS) })
    if (!res.ok) throw new Error(`the ledger answered ${res.status} to ${path.split('?')[0]}`)
    return res
  }

  async key(): Promise<LogKey> {
    const body = (await (await this.#get('/v1/key')).json()) as LogKey
    if (typeof body.verifier_key !== 'string' || typeof body.origin !== 'string')
      throw new Error('the ledger’s key is malformed')
    const key = { origin: body.origin, verifier_key: body.verifier_key, did: body.did }
    this.#pinned ??= key
    return key
  }

  /** The key and latest checkpoint; never throws (an unreachable ledger is a value). */
  async snapshot(): Promise<LedgerSnapshot> {
    try {
      const [key, note] = await Promise.all([this.key(), this.#get('/checkpoint').then((r) => r.text())])
      let verified = false
      let text: string
      try {
        text = openNote(note, [verifierFromKey(this.#pinned!.verifier_key)]).text
        verified = key.verifier_key === this.#pinned!.verifier_key
      } catch {
        text = note.slice(0, note.indexOf('\n\n') + 1)
      }
      const checkpoint = parseCheckpoint(text)
      return {
        reachable: true,
        url: this.url,
        key,
        root: checkpoint.rootHash,
        checkpoint: {
          note,
          origin: checkpoint.origin,
          size: checkpoint.size,
          root_hash: b64Encode(checkpoint.rootHash),
          verified,
        },
      }
    } catch (err) {
      return { reachable: false, url: this.url, error: (err as Error).message }
    }
  }

  /**
   * The inclusion proof of `index` in the snapshot's tree, checked here: the ledger's leaf hash is
   * ours, and the proof leads from it to the root of the verified checkpoint.
   */
  async inclusion(
    snapshot: Extract<LedgerSnapshot, { reachable: true }>,
    index: number,
    leafHash: Uint8Array,
  ): Promise<InclusionCheck> {
    const size = snapshot.checkpoint.size
    if (index >= size) return { proof: null, verified: false, problem: 'not yet in the latest checkpoint' }
    try {
      const body = (await (
        await this.#get(
          `/v1/proofs/inclusion?${new URLSearchParams({ index: `${index}`, tree_size: `${size}` })}`,
        )
      ).json()) as { leaf_hash: string; proof: string[]; tree_size: number }
      const proof = { tree_size: size, hashes: body.proof }
      if (body.leaf_hash !== b64Encode(leafHash))
        return { proof, verified: false, problem: `index ${index} holds another receipt on the ledger` }
      const included = verifyInclusion(leafHash, index, size, body.proof.map(b64Decode), snapshot.root)
      if (!included)
        return { proof, verified: false, problem: 'the proof does not lead to the checkpoint root' }
      if (!snapshot.checkpoint.verified)
        return {
          proof,
          verified: false,
          problem: 'the checkpoint’s signature does not verify with the log key',
        }
      return { proof, verified: true }
    } catch (err) {
      return { proof: null, verified: false, problem: (err as Error).message }
    }
  }
}

/** Runs `work` on each item, `width` at a time, keeping the order. */
export async function mapLimited<T, R>(items: T[], width: number, work: (item: T) => Promise<R>) {
  const out: R[] = new Array(items.length)
  let next = 0
  const lane = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await work(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane))
  return out
}
