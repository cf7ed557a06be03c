import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { outboxRows, receiptState, receiptStates } from './store.ts'

export type OutboxRow = Awaited<ReturnType<typeof outboxRows>>[number]

export interface OutboxService {
  /** The receipt's index on the ledger once delivered; null before (or for an unknown id). */
  ledgerIndexOf(receiptId: string): Promise<number | null>
  /** The ledger indexes of several receipts, by receipt id (delivered ones only). */
  ledgerIndexesOf(receiptIds: string[]): Promise<Map<string, number>>
  /** The rental's receipts by id, oldest first. */
  rows(receiptIds: string[]): Promise<OutboxRow[]>
  /** The same, read in `db` (a transaction's reads: areas/sla's consumer). */
  rowsIn(db: RentalDb, receiptIds: string[]): Promise<OutboxRow[]>
}

/** The rental's receipts as the outbox holds them (the kit's ReceiptWriter delivers them to the ledger). */
export const outboxArea = defineArea({
  name: 'outbox',
  mount: (_app, ctx): OutboxService => ({
    async ledgerIndexOf(receiptId) {
      const row = await receiptState(ctx.db, receiptId)
      return row?.ledger_index === null || row?.ledger_index === undefined ? null : Number(row.ledger_index)
    },
    async ledgerIndexesOf(receiptIds) {
      const rows = await receiptStates(ctx.db, receiptIds)
      return new Map(
        rows.filter((r) => r.ledger_index !== null).map((r) => [r.id, Number(r.ledger_index)] as const),
      )
    },
    rows: (receiptIds) => outboxRows(ctx.db, receiptIds),
    rowsIn: (db, receiptIds) => outboxRows(db, receiptIds),
  }),
})
