import type { MoneyAction, World } from './money-model.ts'

/**
 * The invoices in the money property: an action that asks for an engagement's invoice, and the
 * invariant that an invoice's balance is what is still owed. Prices include VAT and the escrow's
 * release paid each line, so nothing is owed: each line's gross is its escrow's amount (read from the
 * rental's own rows, not the invoice), the invoice is paid and its balance 0, after any refund.
 */

interface Amount {
  amount_fils: number
}
interface InvoiceView {
  number: string
  state: string
  lines: Array<{ escrow_id: string; gross: Amount }>
  credit_notes: Array<{ escrow_id: string; gross: Amount }>
  payments: Array<{ kind: string; amount: Amount }>
  balance: Amount
}

export const INVOICE_ACTIONS: Record<string, MoneyAction> = {
  invoice: {
    weight: 2,
    async run(w, [e = 0]) {
      const eng = w.engagements.length ? w.engagements[e % w.engagements.length] : undefined
      if (!eng) return 'invoice: no engagement'
      const res = await w.s.call(eng.who, 'POST', '/api/invoices', { engagement_id: eng.id })
      const code = (res.body.error as { code?: string } | undefined)?.code
      return res.status === 201
        ? `invoice ${res.body.number as string}`
        : `invoice: ${res.status} ${code ?? ''}`
    },
  },
}

/** Every client's invoices owe nothing, and bill exactly their escrows; throws naming the invoice. */
export async function checkInvoices(w: World, fail: (what: string) => never) {
  for (const who of w.clients) {
    const res = await w.s.call(who, 'GET', '/api/invoices?limit=100')
    if (res.status !== 200)
      fail(`invoices of ${who.me.organization.id}: ${res.status} ${res.text.slice(0, 200)}`)
    for (const invoice of res.body.invoices as InvoiceView[]) {
      const escrows = await w.s.db
        .selectFrom('escrows')
        .select(['id', 'amount_fils', 'state'])
        .where(
          'id',
          'in',
          invoice.lines.map((l) => l.escrow_id),
        )
        .execute()
      const billed = invoice.lines.reduce((sum, l) => sum + l.gross.amount_fils, 0)
      const escrowed = escrows.reduce((sum, x) => sum + Number(x.amount_fils), 0)
      if (escrows.length !== invoice.lines.length || billed !== escrowed)
        fail(`${invoice.number} bills ${billed} for escrows of ${escrowed}`)
      const credited = -invoice.credit_notes.reduce((sum, c) => sum + c.gross.amount_fils, 0)
      const paid = invoice.payments.reduce((sum, p) => sum + p.amount.amount_fils, 0)
      if (invoice.state !== 'paid' || invoice.balance.amount_fils !== 0 || billed - credited - paid !== 0)
        fail(
          `${invoice.number} is ${invoice.state} with a balance of ${invoice.balance.amount_fils} ` +
            `(billed ${billed}, credited ${credited}, paid ${paid}): its escrows paid it`,
        )
    }
  }
}
