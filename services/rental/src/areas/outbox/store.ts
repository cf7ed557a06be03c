import type { Generated } from 'kysely'
import type { RentalDb } from '../../db.ts'

/**
 * The receipt outbox, created and written by the kit's ReceiptWriter
 * (packages/kit/src/receipts/outbox-store.ts); this area is the rental's one reader of it.
 */
export interface OutboxTables {
  receipt_outbox: {
    id: string
    receipt_type: string
    subject: string
    envelope: unknown
    leaf_hash: Buffer
    created_at: Generated<Date>
    delivered_at: Date | null
    ledger_index: number | null
  }
}

/** Where a receipt is: its ledger index once the outbox delivered it. */
export const receiptState = (db: RentalDb, id: string) =>
  db
    .selectFrom('receipt_outbox')
    .select(['id', 'ledger_index', 'delivered_at'])
    .where('id', '=', id)
    .executeTakeFirst()

/** Where several receipts are, in one query. */
export const receiptStates = (db: RentalDb, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db.selectFrom('receipt_outbox').select(['id', 'ledger_index']).where('id', 'in', ids).execute()

/** Outbox rows (the rental's own receipts) by id, oldest first. */
export const outboxRows = (db: RentalDb, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('receipt_outbox')
        .select(['id', 'receipt_type', 'subject', 'envelope', 'leaf_hash', 'created_at', 'ledger_index'])
        .where('id', 'in', ids)
        .orderBy('created_at')
        .orderBy('id')
        .execute()
