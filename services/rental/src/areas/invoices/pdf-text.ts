/** What invoices and credit notes say, in English and Arabic (their HTML pages and PDFs). */

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

/** The words of an invoice, on its HTML page and in its PDF, in English and Arabic. */
export const INVOICE_LABELS = {
  en: {
    ...COMMON.en,
    title: 'Tax invoice',
    number: 'Invoice number',
    due: 'Due date',
    state: 'State',
    paid: 'Paid',
    issuedState: 'Issued',
    reference: 'Payment reference',
    paidOn: 'Paid on',
    byEscrow: 'from escrow, released for the work invoiced',
    escrowRelease: 'Paid from escrow',
    refunded: 'Refunded',
    creditNote: 'credit note',
    marked: 'Payment received',
    balance: 'Balance due',
    vatIncluded: 'Prices include VAT',
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
    paidOn: 'تاريخ الدفع',
    byEscrow: 'من الضمان، المصروف مقابل العمل المفوتر',
    escrowRelease: 'مدفوع من الضمان',
    refunded: 'مسترد',
    creditNote: 'إشعار دائن',
    marked: 'دفعة مستلمة',
    balance: 'الرصيد المستحق',
    vatIncluded: 'الأسعار تشمل ضريبة القيمة المضافة',
  },
}

/** The words of a credit note, on its HTML page and in its PDF, in English and Arabic. */
export const CREDIT_NOTE_LABELS = {
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
