import { html, type MoneyLocale } from '@svc/kit'
import PDFDocument from 'pdfkit'
import { arabicInvoicePdf } from './pdf-rtl.ts'
import { day, INVOICE_LABELS as LABELS } from './pdf-text.ts'
import type { InvoiceView } from './service.ts'

/** The printable page of an invoice (the view is in `locale`'s money already); everything escaped. */
export function invoiceHtml(invoice: InvoiceView, locale: MoneyLocale): string {
  const t = LABELS[locale]
  const page = html`<!doctype html>
<html lang="${locale}" dir="${locale === 'ar' ? 'rtl' : 'ltr'}">
<head><meta charset="utf-8"><title>${t.title} ${invoice.number}</title>
<style>body{font-family:system-ui,sans-serif;max-width:56rem;margin:2rem auto}table{width:100%;border-collapse:collapse}
td,th{border-bottom:1px solid #ccc;padding:.4rem;text-align:start}td.n{text-align:end}@media print{body{margin:0}}</style></head>
<body>
<h1>${t.title}</h1>
<p>${t.number}: <strong>${invoice.number}</strong></p>
<p>${t.issued}: ${day(invoice.issued_at, locale)} · ${t.due}: ${day(invoice.due_at, locale)}</p>
<p>${t.state}: ${invoice.state === 'paid' ? t.paid : t.issuedState}${invoice.paid ? html` · ${t.reference}: ${invoice.paid.reference}` : ''}</p>
<section><h2>${t.issuer}</h2><p>${invoice.issuer.name}<br>${invoice.issuer.address}<br>${t.trn}: ${invoice.issuer.trn}</p></section>
<section><h2>${t.client}</h2><p>${invoice.client.name}</p></section>
<table>
<thead><tr><th>#</th><th>${t.item}</th><th>${t.net}</th><th>${t.vat}</th><th>${t.gross}</th></tr></thead>
<tbody>${invoice.lines.map(
    (l) =>
      html`<tr><td>${l.position}</td><td>${l.description}<br><small>${l.agent_did}</small></td><td class="n">${l.net.display}</td><td class="n">${l.vat.display}</td><td class="n">${l.gross.display}</td></tr>`,
  )}</tbody>
<tfoot><tr><th colspan="2">${t.totals}</th><td class="n">${invoice.totals.net.display}</td><td class="n">${invoice.totals.vat.display}</td><td class="n">${invoice.totals.gross.display}</td></tr></tfoot>
</table>
</body></html>`
  return page.value
}

/**
 * The invoice as a PDF (pdfkit, uncompressed content so its text can be read back): in English
 * with pdfkit's built-in fonts, or in Arabic, right to left (pdf-rtl.ts).
 */
export function invoicePdf(invoice: InvoiceView, locale: MoneyLocale = 'en'): Promise<Buffer> {
  if (locale === 'ar') return arabicInvoicePdf(invoice)
  const t = LABELS.en
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    compress: false,
    info: { Title: `${t.title} ${invoice.number}` },
  })
  const chunks: Buffer[] = []
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c))
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
  })
  doc.font('Helvetica-Bold').fontSize(18).text(t.title)
  doc.font('Helvetica').fontSize(10).moveDown()
  doc.text(`${t.number}: ${invoice.number}`)
  doc.text(`${t.issued}: ${day(invoice.issued_at, 'en')}`)
  doc.text(`${t.due}: ${day(invoice.due_at, 'en')}`)
  doc.text(
    `${t.state}: ${invoice.state === 'paid' ? `${t.paid} (${invoice.paid!.reference})` : t.issuedState}`,
  )
  doc.moveDown()
  doc.text(`${t.issuer}: ${invoice.issuer.name}, ${invoice.issuer.address}, ${t.trn} ${invoice.issuer.trn}`)
  doc.text(`${t.client}: ${invoice.client.name}`)
  doc.moveDown()
  for (const l of invoice.lines)
    doc.text(
      `${l.position}. ${l.description} | ${t.net} ${l.net.display} | ${t.vat} ${l.vat.display} | ${t.gross} ${l.gross.display}`,
    )
  doc.moveDown()
  doc.font('Helvetica-Bold')
  doc.text(
    `${t.totals}: ${t.net} ${invoice.totals.net.display} | ${t.vat} ${invoice.totals.vat.display} | ${t.gross} ${invoice.totals.gross.display}`,
  )
  doc.end()
  return done
}
