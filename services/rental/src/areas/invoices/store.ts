import { countedPageOfRows } from '@svc/kit'
import { type Generated, type Insertable, type Selectable, sql } from 'kysely'
import type { Json, RentalDb, RentalTables } from '../../db.ts'

/** The invoices area's tables: the issuers' number counters, invoices and their lines (migration 0024), credit notes (0029). */
export interface InvoiceTables {
  invoice_counters: { issuer: string; year: number; last_number: Generated<number> }
  invoices: {
    id: string
    org_id: string
    issuer: string
    number: string
    engagement_id: string | null
    period_from: Date | null
    period_to: Date | null
    currency: Generated<string>
    net_fils: number
    vat_fils: number
    gross_fils: number
    vat_rate_bps: number
    issuer_details: Json
    client_details: Json
    issued_at: Date
    due_at: Date
    state: 'issued' | 'paid'
    /** Lines of VAT-inclusive escrows (gross = the escrow), paid by their releases at issue (migration 0053). */
    vat_inclusive: Generated<boolean>
    paid_reference: string | null
    paid_at: Date | null
    paid_by: string | null
    paid_receipt_id: string | null
    created_by: string | null
  }
  invoice_lines: {
    invoice_id: string
    position: number
    escrow_id: string
    engagement_id: string
    task_id: string | null
    description: string
    agent_did: string
    net_fils: number
    fee_fils: number
    vat_fils: number
    gross_fils: number
    released_at: Date
    /** The release transfer that paid the line (null on lines before migration 0053). */
    transfer_id: string | null
  }
  credit_notes: {
    id: string
    org_id: string
    issuer: string
    number: string
    refund_id: string
    invoice_id: string | null
    escrow_id: string
    engagement_id: string
    task_id: string | null
    agent_did: string
    description: string
    currency: Generated<string>
    net_fils: number
    vat_fils: number
    gross_fils: number
    vat_rate_bps: number
    issuer_details: Json
    client_details: Json
    reason: string
    issued_at: Date
    /** Gross = the refund (its VAT share inside), not the refund plus VAT (migration 0053). */
    vat_inclusive: Generated<boolean>
    /** The transfer that paid the refund back to the wallet. */
    transfer_id: string | null
  }
}

export type InvoiceRow = Selectable<RentalTables['invoices']>
export type InvoiceLineRow = Selectable<RentalTables['invoice_lines']>
export type CreditNoteRow = Selectable<RentalTables['credit_notes']>

/** A numbered sequence: its counter row in `invoice_counters` and its numbers' prefix. */
export interface NumberSequence {
  issuer: string
  prefix: 'INV' | 'CN'
}

/**
 * The sequence's next number for the year (`INV-2026-000001`), taken in `trx`: the counter row is
 * made once, then incremented with `update … returning`, which holds its row lock until `trx` ends.
 * Concurrent creations wait in turn; a rolled-back one gives its number back with it (no gap).
 */
export async function nextNumber(trx: RentalDb, sequence: NumberSequence, year: number): Promise<string> {
  const { issuer } = sequence
  await trx
    .insertInto('invoice_counters')
    .values({ issuer, year })
    .onConflict((oc) => oc.columns(['issuer', 'year']).doNothing())
    .execute()
  const row = await trx
    .updateTable('invoice_counters')
    .set((eb) => ({ last_number: eb('last_number', '+', 1) }))
    .where('issuer', '=', issuer)
    .where('year', '=', year)
    .returning('last_number')
    .executeTakeFirstOrThrow()
  return `${sequence.prefix}-${year}-${String(row.last_number).padStart(6, '0')}`
}

/** A page of the organization's invoices or credit notes, newest first, and how many it has. */
async function documentPage<T extends 'invoices' | 'credit_notes'>(
  db: RentalDb,
  table: T,
  orgId: string,
  limit: number,
  offset: number,
): Promise<{ rows: Array<Selectable<RentalTables[T]>>; total: number }> {
  // one query shape for both tables (kysely's types take one table name at a time)
  const from = table as 'invoices'
  const { rows, total } = await countedPageOfRows(
    db,
    {
      table: from,
      owner: ['org_id', orgId],
      order: [
        ['issued_at', 'desc'],
        ['number', 'desc'],
      ],
    },
    { limit, offset },
  )
  return { rows: rows as Array<Selectable<RentalTables[T]>>, total }
}

/** Which of these escrows are on an invoice already. */
export async function invoicedEscrows(db: RentalDb, escrowIds: string[]): Promise<Set<string>> {
  if (escrowIds.length === 0) return new Set()
  const rows = await db
    .selectFrom('invoice_lines')
    .select('escrow_id')
    .where('escrow_id', 'in', escrowIds)
    .execute()
  return new Set(rows.map((r) => r.escrow_id))
}

export async function insertInvoice(
  trx: RentalDb,
  invoice: Insertable<RentalTables['invoices']>,
  lines: Array<Insertable<RentalTables['invoice_lines']>>,
) {
  await trx.insertInto('invoices').values(invoice).execute()
  await trx.insertInto('invoice_lines').values(lines).execute()
}

/** The organization's invoice (any organization's when `orgId` is null: an operator's); `lock` takes it FOR UPDATE. */
export const invoiceOf = (db: RentalDb, orgId: string | null, id: string, lock = false) => {
  let query = db.selectFrom('invoices').selectAll().where('id', '=', id)
  if (orgId !== null) query = query.where('org_id', '=', orgId)
  return (lock ? query.forUpdate() : query).executeTakeFirst()
}

export const linesOf = (db: RentalDb, invoiceIds: string[]) =>
  invoiceIds.length === 0
    ? Promise.resolve([] as InvoiceLineRow[])
    : db
        .selectFrom('invoice_lines')
        .selectAll()
        .where('invoice_id', 'in', invoiceIds)
        .orderBy('invoice_id')
        .orderBy('position')
        .execute()

export const invoicesOf = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  documentPage(db, 'invoices', orgId, limit, offset)

export async function markPaid(
  trx: RentalDb,
  id: string,
  paid: { reference: string; at: Date; by: string; receiptId: string },
) {
  await trx
    .updateTable('invoices')
    .set({
      state: 'paid',
      paid_reference: paid.reference,
      paid_at: paid.at,
      paid_by: paid.by,
      paid_receipt_id: paid.receiptId,
    })
    .where('id', '=', id)
    .where('state', '=', 'issued')
    .execute()
}

/** The invoice line that carries an escrow, with its invoice's number, if the escrow is invoiced. */
export const lineOfEscrow = (db: RentalDb, escrowId: string) =>
  db
    .selectFrom('invoice_lines')
    .innerJoin('invoices', 'invoices.id', 'invoice_lines.invoice_id')
    .select(['invoice_lines.invoice_id', 'invoice_lines.description', 'invoices.number'])
    .where('invoice_lines.escrow_id', '=', escrowId)
    .executeTakeFirst()

/** The amount already refunded against an escrow by its earlier credit notes (a VAT-inclusive one's gross, an earlier one's net). */
export async function creditedOf(db: RentalDb, escrowId: string): Promise<number> {
  const row = await db
    .selectFrom('credit_notes')
    .select(
      sql<string>`coalesce(sum(case when vat_inclusive then gross_fils else net_fils end), 0)`.as('total'),
    )
    .where('escrow_id', '=', escrowId)
    .executeTakeFirstOrThrow()
  return Number(row.total)
}

export const insertCreditNote = (trx: RentalDb, row: Insertable<RentalTables['credit_notes']>) =>
  trx.insertInto('credit_notes').values(row).execute()

export const creditNoteOf = (db: RentalDb, orgId: string, id: string) =>
  db
    .selectFrom('credit_notes')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .executeTakeFirst()

export const creditNotesOf = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  documentPage(db, 'credit_notes', orgId, limit, offset)

/** The credit notes against the escrows these invoices carry (issued before or after the invoice), oldest first. */
export const creditNotesOfInvoices = (db: RentalDb, invoiceIds: string[]) =>
  invoiceIds.length === 0
    ? Promise.resolve([] as Array<CreditNoteRow & { on_invoice: string }>)
    : db
        .selectFrom('credit_notes')
        .innerJoin('invoice_lines', 'invoice_lines.escrow_id', 'credit_notes.escrow_id')
        .selectAll('credit_notes')
        .select('invoice_lines.invoice_id as on_invoice')
        .where('invoice_lines.invoice_id', 'in', invoiceIds)
        .orderBy('credit_notes.issued_at')
        .orderBy('credit_notes.number')
        .execute()

/** The organization's invoices that carry a line of the engagement (an engagement's or a period's), oldest first. */
export const invoicesOfEngagement = (db: RentalDb, orgId: string, engagementId: string) =>
  db
    .selectFrom('invoices')
    .selectAll()
    .where('org_id', '=', orgId)
    .where((eb) =>
      eb.or([
        eb('engagement_id', '=', engagementId),
        eb(
          'id',
          'in',
          eb.selectFrom('invoice_lines').select('invoice_id').where('engagement_id', '=', engagementId),
        ),
      ]),
    )
    .orderBy('issued_at')
    .orderBy('number')
    .execute()

/** The organization's credit notes for the engagement's escrows, oldest first. */
export const creditNotesOfEngagement = (db: RentalDb, orgId: string, engagementId: string) =>
  db
    .selectFrom('credit_notes')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
    .orderBy('issued_at')
    .orderBy('number')
    .execute()
