import { b64Encode } from '@svc/trust/base64url'
import { type AnyDb, outboxSince } from './outbox-store.ts'

export interface Discrepancy {
  id: string
  type: string
  subject: string
  created_at: string
  ledger_index: number | null
  reason: 'not_delivered' | 'rejected' | 'missing_on_ledger' | 'leaf_mismatch' | 'ledger_unreachable'
  detail: string
}

/** Receipts recorded since `since` that the ledger does not hold, each with the reason. */
export async function reconcile(db: AnyDb, ledgerUrl: string, since: Date): Promise<Discrepancy[]> {
  const rows = await outboxSince(db, since)
  const found: Discrepancy[] = []
  for (const row of rows) {
    const report = (reason: Discrepancy['reason'], detail: string) =>
      found.push({
        id: row.id,
        type: row.receipt_type,
        subject: row.subject,
        created_at: row.created_at.toISOString(),
        ledger_index: row.ledger_index,
        reason,
        detail,
      })
    if (row.rejected) report('rejected', row.last_error ?? 'refused by the ledger')
    else if (row.ledger_index === null)
      report('not_delivered', row.last_error ?? `not yet delivered (${row.attempts} attempts)`)
    else {
      const check = await ledgerHas(ledgerUrl, row.ledger_index, row.leaf_hash)
      if (check) report(check.reason, check.detail)
    }
  }
  return found
}

async function ledgerHas(
  ledgerUrl: string,
  index: number,
  hash: Buffer,
): Promise<Pick<Discrepancy, 'reason' | 'detail'> | undefined> {
  try {
    const res = await fetch(`${ledgerUrl}/v1/entries/${index}`, {
      signal: AbortSignal.timeout(5_000),
    })
    if (res.status === 404)
      return { reason: 'missing_on_ledger', detail: `the ledger has no entry at index ${index}` }
    if (!res.ok) return { reason: 'ledger_unreachable', detail: `the ledger answered ${res.status}` }
    const entry = (await res.json()) as { leaf_hash: string }
    if (entry.leaf_hash !== b64Encode(hash))
      return {
        reason: 'leaf_mismatch',
        detail: `index ${index} holds another receipt (${entry.leaf_hash})`,
      }
    return undefined
  } catch (err) {
    return { reason: 'ledger_unreachable', detail: (err as Error).message }
  }
}
