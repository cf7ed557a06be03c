import { defineArea } from '../../context.ts'
import { outboxRows, receiptState } from './store.ts'

export type OutboxRow = Awaited<ReturnType<typeof outboxRows>>[number]

export interface OutboxService {
  /** The receipt's index on the ledger once delivered; null before (or for an unknown id). */
  ledgerIndexOf(receiptId: string): Promise<number | null>
  /** The rental's receipts by id, oldest first. */
  rows(receiptIds: string[]): Promise<OutboxRow[]>
}

/** The rental's receipts as the outbox holds them (the kit's ReceiptWriter delivers them to the ledger). */
export const outboxArea = defineArea({
  name: 'outbox',
  mount: (_app, ctx): OutboxService => ({
    async ledgerIndexOf(receiptId) {
      const row = await receiptState(ctx.db, receiptId)
      return row?.ledger_index === null || row?.ledger_index === undefined ? null : Number(row.ledger_index)
    },
    rows: (receiptIds) => outboxRows(ctx.db, receiptIds),
  }),
})
