import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { type CreditNoteInput, issueCreditNote } from './credit-notes.ts'
import { invoiceRoutes } from './routes.ts'
import type { InvoiceDeps } from './service.ts'

export interface InvoiceService {
  /**
   * The credit note of a settled refund, in the refund's transaction: numbered in the `CN-`
   * sequence, VAT reversed half-up, naming the invoice that carries the escrow if there is one.
   */
  issueCreditNote(trx: RentalDb, input: CreditNoteInput): Promise<{ id: string; number: string }>
}
export type { CreditNoteInput }

/**
 * Invoices the platform issues to an organization for its released escrows (a period or an
 * engagement): numbered without gaps per issuer, VAT per line, immutable once issued, marked paid
 * once with a receipt (by the billing role or an operator); credit notes for settled refunds in
 * a sequence of their own. Reads escrows through the engagements area.
 * Tables: invoice_counters, invoices, invoice_lines, credit_notes.
 */
export const invoicesArea = defineArea({
  name: 'invoices',
  needs: ['engagements', 'events', 'orgs'],
  mount(_app, ctx, use): InvoiceService {
    const deps: InvoiceDeps = { ctx, ...use }
    return { issueCreditNote: (trx, input) => issueCreditNote(deps, trx, input) }
  },
  routes(app, ctx, use) {
    invoiceRoutes(app, ctx, { ctx, ...use })
  },
})
