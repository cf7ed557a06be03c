import type { MoneyLocale } from '@svc/kit'

/** The words of an invoice, on its HTML page and in its PDF, in English and Arabic. */
export const INVOICE_LABELS = {
  en: {
    title: 'Tax invoice',
    number: 'Invoice number',
    issued: 'Issue date',
    due: 'Due date',
    issuer: 'Issuer',
    client: 'Client',
    trn: 'TRN',
    item: 'Item',
    net: 'Net',
    vat: 'VAT 5%',
    gross: 'Total',
    totals: 'Totals',
    state: 'State',
    paid: 'Paid',
    issuedState: 'Issued',
    reference: 'Payment reference',
  },
  ar: {
    title: 'فاتورة ضريبية',
    number: 'رقم الفاتورة',
    issued: 'تاريخ الإصدار',
    due: 'تاريخ الاستحقاق',
    issuer: 'المُصدِر',
    client: 'العميل',
    trn: 'الرقم الضريبي',
    item: 'البند',
    net: 'الصافي',
    vat: 'ضريبة القيمة المضافة ٥٪',
    gross: 'الإجمالي',
    totals: 'المجاميع',
    state: 'الحالة',
    paid: 'مدفوعة',
    issuedState: 'صادرة',
    reference: 'مرجع الدفع',
  },
}

/** The words of a credit note, on its HTML page and in its PDF. */
export const CREDIT_NOTE_LABELS = {
  en: {
    title: 'Tax credit note',
    number: 'Credit note number',
    issued: 'Issue date',
    invoice: 'Against invoice',
    noInvoice: 'Not invoiced yet (the escrow’s invoice will list this note)',
    refund: 'Refund',
    reason: 'Reason',
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
    title: 'إشعار دائن ضريبي',
    number: 'رقم الإشعار الدائن',
    issued: 'تاريخ الإصدار',
    invoice: 'مقابل الفاتورة',
    noInvoice: 'لم تصدر فاتورة بعد (ستذكر فاتورة الضمان هذا الإشعار)',
    refund: 'الاسترداد',
    reason: 'السبب',
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

/** A day as a person reads it (Arabic: Arabic-Indic digits and the month's Arabic name), in UTC. */
export const day = (iso: string, locale: MoneyLocale) =>
  new Intl.DateTimeFormat(locale === 'ar' ? 'ar-AE-u-nu-arab' : 'en-AE', {
    dateStyle: 'long',
    timeZone: 'UTC',
  }).format(new Date(iso))
