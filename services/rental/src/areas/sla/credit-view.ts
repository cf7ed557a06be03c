import type { Term } from './measure.ts'
import type { SlaCreditRow } from './store.ts'

/** A credit as `GET …/sla` and `GET /api/sla/events` show it. */
export function creditView(row: SlaCreditRow) {
  return {
    id: row.id,
    breach_event_id: row.event_id,
    term: row.term as Term,
    period: { from: row.period_from.toISOString(), to: row.period_to.toISOString() },
    fees_fils: Number(row.fees_fils),
    credit_bps: row.credit_bps,
    owed_fils: Number(row.owed_fils),
    amount_fils: Number(row.amount_fils),
    currency: 'AED',
    transfer_id: row.transfer_id,
    receipt_leaf_hash: row.receipt_leaf_hash,
    event_id: row.credited_event_id,
    created_at: row.created_at.toISOString(),
  }
}
