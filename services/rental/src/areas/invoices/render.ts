import { html, type MoneyLocale } from '@svc/kit'
import type { CreditNoteView } from './credit-notes.ts'
import { day, type DocumentKind, documentHtml, documentPdf } from './document.ts'
import type { InvoiceView } from './service.ts'

const COMMON = {
  en: {
    issued: 'Issue date',
    issuer: 'Issuer',
    client: 'Client',
    trn: 'TRN',
    item: 'Item',
    net: 'Net',
    vat: 'VAT 5%',
    gross: 'Total',
    totals: 'Totals',
  },
  ar: {
    issued: 'تاريخ الإصدار',
    issuer: 'المُصدِر',
    client: 'العميل',
    trn: 'الرقم الضريبي',
    item: 'البند',
    net: 'الصافي',
    vat: 'ضريبة القيمة المضافة ٥٪',
    gross: 'الإجمالي',
    totals: 'المجاميع',
  },
}

const INVOICE_LABELS = {
  en: {
    ...COMMON.en,
    title: 'Tax invoice',
    number: 'Invoice number',
    due: 'Due date',
    state: 'State',
    paid: 'Paid',
    issuedState: 'Issued',
    reference: 'Payment reference',
  },
  ar: {
    ...COMMON.ar,
    title: 'فاتورة ضريبية',
    number: 'رقم الفاتورة',
    due: 'تاريخ الاستحقاق',
    state: 'الحالة',
    paid: 'مدفوعة',
    issuedState: 'صادرة',
    reference: 'مرجع الدفع',
  },
}

const CREDIT_NOTE_LABELS = {
  en: {
    ...COMMON.en,
    title: 'Tax credit note',
    number: 'Credit note number',
    invoice: 'Against invoice',
    noInvoice: 'Not invoiced yet (the escrow’s invoice will list this note)',
    refund: 'Refund',
    reason: 'Reason',
  },
  ar: {
    ...COMMON.ar,
    title: 'إشعار دائن ضريبي',
    number: 'رقم الإشعار الدائن',
    invoice: 'مقابل الفاتورة',
    noInvoice: 'لم تصدر فاتورة بعد (ستذكر فاتورة الضمان هذا الإشعار)',
    refund: 'الاسترداد',
    reason: 'السبب',
  },
}

/** An invoice states its dates and whether it is paid (with the payment's reference). */
const INVOICE: DocumentKind<InvoiceView, (typeof INVOICE_LABELS)['en']> = {
  labels: INVOICE_LABELS,
  htmlFacts: (invoice, t, locale) => [
    html`${t.issued}: ${day(invoice.issued_at, locale)} · ${t.due}: ${day(invoice.due_at, locale)}`,
    html`${t.state}: ${invoice.state === 'paid' ? t.paid : t.issuedState}${invoice.paid ? html` · ${t.reference}: ${invoice.paid.reference}` : ''}`,
  ],
  pdfFacts: (invoice, t) => [
    `${t.issued}: ${day(invoice.issued_at, 'en')}`,
    `${t.due}: ${day(invoice.due_at, 'en')}`,
    `${t.state}: ${invoice.state === 'paid' ? `${t.paid} (${invoice.paid!.reference})` : t.issuedState}`,
  ],
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
export const invoicePdf = (invoice: InvoiceView) => documentPdf(INVOICE, invoice)

/** The printable page of a credit note (its amounts, negative, in `locale`'s money already). */
export const creditNoteHtml = (note: CreditNoteView, locale: MoneyLocale) =>
  documentHtml(CREDIT_NOTE, note, locale)
export const creditNotePdf = (note: CreditNoteView) => documentPdf(CREDIT_NOTE, note)
