import { b64Encode } from '@svc/trust/base64url'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash } from '@svc/trust/merkle'
import type { OutboxRow, OutboxService } from '../outbox/index.ts'
import {
  type CheckpointView,
  type LedgerReader,
  type LedgerSnapshot,
  type LogKey,
  mapLimited,
} from './ledger.ts'

/** A receipt as the ledger holds it, with its RFC 9162 inclusion proof against one checkpoint. */
export interface ProvedReceipt {
  id: string
  leaf_hash: string
  ledger_index: number | null
  envelope: { receipt: Record<string, unknown>; signature: string }
  proof: { tree_size: number; hashes: string[] } | null
  /** Checked here: the proof leads to the root of the checkpoint the log key signed. */
  verified: boolean
  /** No proof yet for a passing reason (not delivered, not in the latest checkpoint, ledger unreachable): ask later. */
  pending: boolean
  problem?: string
}

/** The ledger as read once for a set of proofs: its checkpoint and key (null when unreachable). */
export interface LedgerView {
  ledger: { url: string; reachable: boolean; error?: string }
  checkpoint: CheckpointView | null
  log_key: LogKey | null
}

export const ledgerView = (snapshot: LedgerSnapshot): LedgerView => ({
  ledger: snapshot.reachable
    ? { url: snapshot.url, reachable: true }
    : { url: snapshot.url, reachable: false, error: snapshot.error },
  checkpoint: snapshot.reachable ? snapshot.checkpoint : null,
  log_key: snapshot.reachable ? snapshot.key : null,
})

/** One outbox row's proof in `snapshot`'s tree; the stored leaf hash must be the one of the stored envelope. */
export async function proveRow(
  ledger: LedgerReader,
  snapshot: LedgerSnapshot,
  row: OutboxRow,
): Promise<ProvedReceipt> {
  const envelope = row.envelope as ProvedReceipt['envelope']
  const index = row.ledger_index === null ? null : Number(row.ledger_index)
  const base = { id: row.id, leaf_hash: b64Encode(row.leaf_hash), ledger_index: index, envelope }
  const computed = leafHash(canonicalBytes(envelope))
  if (!Buffer.from(computed).equals(row.leaf_hash))
    return {
      ...base,
      proof: null,
      verified: false,
      pending: false,
      problem: 'the envelope does not match its leaf hash',
    }
  if (index === null)
    return { ...base, proof: null, verified: false, pending: true, problem: 'not yet on the ledger' }
  if (!snapshot.reachable)
    return { ...base, proof: null, verified: false, pending: true, problem: 'the ledger is unreachable' }
  const check = await ledger.inclusion(snapshot, index, computed)
  return { ...base, ...check, pending: check.proof === null }
}

/**
 * The receipts' proofs against the ledger's latest checkpoint, read once. The outbox is read
 * before the checkpoint: whatever it says is delivered is inside that checkpoint.
 */
export async function proveReceipts(ledger: LedgerReader, outbox: OutboxService, receiptIds: string[]) {
  const rows = await outbox.rows(receiptIds)
  const snapshot = await ledger.snapshot()
  const proved = await mapLimited(rows, 8, (row) => proveRow(ledger, snapshot, row))
  return { ...ledgerView(snapshot), receipts: new Map(proved.map((p) => [p.id, p])) }
}
