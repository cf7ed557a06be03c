import type { MoneyLocale } from '@svc/kit'
import { day } from './document.ts'
import type { INVOICE_LABELS } from './pdf-text.ts'
import { type InvoiceView, PAID_BY_ESCROW } from './service.ts'

export type InvoiceWords = (typeof INVOICE_LABELS)['en']

/**
 * What an invoice states under its number, as label and value, in every form (page, PDFs): its
 * dates; paid, and by what (its escrows' releases), or due; each payment applied; the balance.
 */
export function invoiceFacts(
  invoice: InvoiceView,
  t: InvoiceWords,
  locale: MoneyLocale,
): Array<[string, string]> {
  const facts: Array<[string, string]> = [[t.issued, day(invoice.issued_at, locale)]]
  const byEscrow = invoice.paid?.reference === PAID_BY_ESCROW
  if (byEscrow)
    facts.push([t.state, `${t.paid} ${t.byEscrow}`], [t.paidOn, day(invoice.paid!.paid_at, locale)])
  else
    facts.push(
      [t.due, day(invoice.due_at, locale)],
      [t.state, invoice.paid ? `${t.paid} (${t.reference}: ${invoice.paid.reference})` : t.issuedState],
    )
  for (const p of invoice.payments)
    facts.push([
      p.kind === 'escrow_release' ? t.escrowRelease : p.kind === 'refund' ? t.refunded : t.marked,
      `${p.amount.display} · ${day(p.at, locale)}${p.credit_note ? ` · ${t.creditNote} ${p.credit_note}` : ''}`,
    ])
  facts.push([t.balance, invoice.balance.display])
  if (byEscrow) facts.push([t.vatIncluded, `${invoice.vat_rate_percent} %`])
  return facts
}
