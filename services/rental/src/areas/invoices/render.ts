import { html, type MoneyLocale } from '@svc/kit'
import type { CreditNoteView } from './credit-notes.ts'
import { day, type DocumentKind, documentHtml, documentPdf } from './document.ts'
import { arabicCreditNotePdf, arabicInvoicePdf } from './pdf-rtl.ts'
import { CREDIT_NOTE_LABELS, INVOICE_LABELS } from './pdf-text.ts'
import type { InvoiceView } from './service.ts'
import { invoiceFacts, type InvoiceWords } from './invoice-facts.ts'

/** An invoice states its dates, whether it is paid and by what, its payments and its balance. */
const INVOICE: DocumentKind<InvoiceView, InvoiceWords> = {
  labels: INVOICE_LABELS,
  htmlFacts: (invoice, t, locale) =>
    invoiceFacts(invoice, t, locale).map(([label, value]) => html`${label}: ${value}`),
  pdfFacts: (invoice, t) => invoiceFacts(invoice, t, 'en').map(([label, value]) => `${label}: ${value}`),
}

/** A credit note states its date, the invoice it is against (if any), its refund and why. */
const CREDIT_NOTE: DocumentKind<CreditNoteView, (typeof CREDIT_NOTE_LABELS)['en']> = {
  labels: CREDIT_NOTE_LABELS,
  htmlFacts: (note, t, locale) => [
    html`${t.issued}: ${day(note.issued_at, locale)}`,
    html`${t.invoice}: ${note.invoice ? note.invoice.number : t.noInvoice}`,
    html`${t.refund}: ${note.refund_id} · ${t.reason}: ${note.reason}`,
  ],
  pdfFacts: (note, t) => [
    `${t.issued}: ${day(note.issued_at, 'en')}`,
    `${t.invoice}: ${note.invoice ? note.invoice.number : t.noInvoice}`,
    `${t.refund}: ${note.refund_id} | ${t.reason}: ${note.reason}`,
  ],
}

/** The printable page of an invoice (the view is in `locale`'s money already). */
export const invoiceHtml = (invoice: InvoiceView, locale: MoneyLocale) =>
  documentHtml(INVOICE, invoice, locale)
/** The invoice as a PDF: in English with pdfkit's built-in fonts, or in Arabic, right to left (pdf-rtl.ts). */
export const invoicePdf = (invoice: InvoiceView, locale: MoneyLocale = 'en') =>
  locale === 'ar' ? arabicInvoicePdf(invoice) : documentPdf(INVOICE, invoice)

/** The printable page of a credit note (its amounts, negative, in `locale`'s money already). */
export const creditNoteHtml = (note: CreditNoteView, locale: MoneyLocale) =>
  documentHtml(CREDIT_NOTE, note, locale)
export const creditNotePdf = (note: CreditNoteView, locale: MoneyLocale = 'en') =>
  locale === 'ar' ? arabicCreditNotePdf(note) : documentPdf(CREDIT_NOTE, note)
