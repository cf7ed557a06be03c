import { defineArea } from '../../context.ts'
import { invoiceRoutes } from './routes.ts'

/**
 * Invoices the platform issues to an organization for its released escrows (a period or an
 * engagement): numbered without gaps per issuer, VAT per line, immutable once issued, marked paid
 * once with a receipt. Reads escrows through the engagements area.
 * Tables: invoice_counters, invoices, invoice_lines.
 */
export const invoicesArea = defineArea({
  name: 'invoices',
  needs: ['engagements', 'events', 'orgs'],
  mount: () => undefined,
  routes(app, ctx, use) {
    invoiceRoutes(app, ctx, { ctx, ...use })
  },
})
