import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { type CreditNoteInput, creditVatOf, issueCreditNote } from './credit-notes.ts'
import { invoiceRoutes } from './routes.ts'
import { creditNoteView, type CreditNoteView } from './credit-notes.ts'
import { creditNotePdf, invoicePdf } from './render.ts'
import { type InvoiceDeps, invoiceList, invoiceView, type InvoiceView } from './service.ts'
import type { Page } from '@svc/kit'
import * as store from './store.ts'

export interface InvoiceService {
  /** The organization's invoices, a page of them, as GET /api/invoices lists them (the tenant export). */
  list(orgId: string, page: Page): ReturnType<typeof invoiceList>
  /**
   * The credit note of a settled refund, in the refund's transaction: numbered in the `CN-`
   * sequence, its gross the refund with its VAT share inside (creditVatOf), naming the invoice that
   * carries the escrow if there is one.
   */
  issueCreditNote(
    trx: RentalDb,
    input: CreditNoteInput,
  ): Promise<{ id: string; number: string; vatFils: number }>
  /**
   * The VAT a refund of `amountFils` takes back from the escrow's release (platform:vat), as its
   * credit note will state it, in the refund's transaction before its transfer.
   */
  creditVatOf(trx: RentalDb, orgId: string, escrowId: string, amountFils: number): Promise<number>
  /**
   * The organization's invoices carrying the engagement's escrows (with their credit notes) and
   * the credit notes of its refunds, as the API shows them, oldest first (the export).
   */
  ofEngagement(
    orgId: string,
    engagementId: string,
  ): Promise<{ invoices: InvoiceView[]; credit_notes: CreditNoteView[] }>
  /** The invoice's or the credit note's PDF, as `GET …/pdf` answers it. */
  pdfOf(document: InvoiceView | CreditNoteView): Promise<Buffer>
}
export type { CreditNoteInput }

/**
 * Invoices the platform issues to an organization for its released escrows (a period or an
 * engagement): numbered without gaps per issuer, VAT-inclusive lines (the VAT each release posted to
 * platform:vat), immutable once issued, paid by those releases when issued (an earlier invoice of
 * VAT on top is marked paid once with a receipt, by the billing role or an operator); credit notes
 * for settled refunds in a sequence of their own (docs/money.md). Reads escrows through the engagements area.
 * Tables: invoice_counters, invoices, invoice_lines, credit_notes.
 */
export const invoicesArea = defineArea({
  name: 'invoices',
  needs: ['engagements', 'events', 'orgs'],
  mount(_app, ctx, use): InvoiceService {
    const deps: InvoiceDeps = { ctx, ...use }
    return {
      list: (orgId, page) => invoiceList(deps, orgId, page),
      issueCreditNote: (trx, input) => issueCreditNote(deps, trx, input),
      creditVatOf: (trx, orgId, escrowId, amountFils) => creditVatOf(deps, trx, orgId, escrowId, amountFils),
      async ofEngagement(orgId, engagementId) {
        const rows = await store.invoicesOfEngagement(ctx.db, orgId, engagementId)
        const ids = rows.map((r) => r.id)
        const lines = await store.linesOf(ctx.db, ids)
        const credits = await store.creditNotesOfInvoices(ctx.db, ids)
        const notes = await store.creditNotesOfEngagement(ctx.db, orgId, engagementId)
        const numbers = new Map(rows.map((r) => [r.id, r.number]))
        for (const n of notes)
          if (n.invoice_id && !numbers.has(n.invoice_id))
            numbers.set(n.invoice_id, (await store.invoiceOf(ctx.db, orgId, n.invoice_id))?.number ?? '')
        return {
          invoices: rows.map((r) =>
            invoiceView(
              r,
              lines.filter((l) => l.invoice_id === r.id),
              'en',
              credits.filter((c) => c.on_invoice === r.id),
            ),
          ),
          credit_notes: notes.map((n) =>
            creditNoteView(n, n.invoice_id ? (numbers.get(n.invoice_id) ?? null) : null),
          ),
        }
      },
      pdfOf: (document) =>
        'kind' in document && document.kind === 'credit_note'
          ? creditNotePdf(document)
          : invoicePdf(document as InvoiceView),
    }
  },
  routes(app, ctx, use) {
    invoiceRoutes(app, ctx, { ctx, ...use })
  },
})
