import { html, type MoneyLocale } from '@svc/kit'
import PDFDocument from 'pdfkit'
import type { CreditNoteView } from './credit-notes.ts'
import { arabicCreditNotePdf } from './pdf-rtl.ts'
import { CREDIT_NOTE_LABELS as LABELS, day } from './pdf-text.ts'

/** The printable page of a credit note (its amounts, negative, in `locale`'s money already); everything escaped. */
export function creditNoteHtml(note: CreditNoteView, locale: MoneyLocale): string {
  const t = LABELS[locale]
  return html`<!doctype html>
<html lang="${locale}" dir="${locale === 'ar' ? 'rtl' : 'ltr'}">
<head><meta charset="utf-8"><title>${t.title} ${note.number}</title>
<style>body{font-family:system-ui,sans-serif;max-width:56rem;margin:2rem auto}table{width:100%;border-collapse:collapse}
td,th{border-bottom:1px solid #ccc;padding:.4rem;text-align:start}td.n{text-align:end}@media print{body{margin:0}}</style></head>
<body>
<h1>${t.title}</h1>
<p>${t.number}: <strong>${note.number}</strong></p>
<p>${t.issued}: ${day(note.issued_at, locale)}</p>
<p>${t.invoice}: ${note.invoice ? note.invoice.number : t.noInvoice}</p>
<p>${t.refund}: ${note.refund_id} · ${t.reason}: ${note.reason}</p>
<section><h2>${t.issuer}</h2><p>${note.issuer.name}<br>${note.issuer.address}<br>${t.trn}: ${note.issuer.trn}</p></section>
<section><h2>${t.client}</h2><p>${note.client.name}</p></section>
<table>
<thead><tr><th>#</th><th>${t.item}</th><th>${t.net}</th><th>${t.vat}</th><th>${t.gross}</th></tr></thead>
<tbody>${note.lines.map(
    (l) =>
      html`<tr><td>${l.position}</td><td>${l.description}<br><small>${l.agent_did}</small></td><td class="n">${l.net.display}</td><td class="n">${l.vat.display}</td><td class="n">${l.gross.display}</td></tr>`,
  )}</tbody>
<tfoot><tr><th colspan="2">${t.totals}</th><td class="n">${note.totals.net.display}</td><td class="n">${note.totals.vat.display}</td><td class="n">${note.totals.gross.display}</td></tr></tfoot>
</table>
</body></html>`.value
}

/** The credit note as a PDF (pdfkit, uncompressed; in English or Arabic, as the invoice's PDF: see invoicePdf). */
export function creditNotePdf(note: CreditNoteView, locale: MoneyLocale = 'en'): Promise<Buffer> {
  if (locale === 'ar') return arabicCreditNotePdf(note)
  const t = LABELS.en
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    compress: false,
    info: { Title: `${t.title} ${note.number}` },
  })
  const chunks: Buffer[] = []
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c))
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
  })
  doc.font('Helvetica-Bold').fontSize(18).text(t.title)
  doc.font('Helvetica').fontSize(10).moveDown()
  doc.text(`${t.number}: ${note.number}`)
  doc.text(`${t.issued}: ${day(note.issued_at, 'en')}`)
  doc.text(`${t.invoice}: ${note.invoice ? note.invoice.number : t.noInvoice}`)
  doc.text(`${t.refund}: ${note.refund_id} | ${t.reason}: ${note.reason}`)
  doc.moveDown()
  doc.text(`${t.issuer}: ${note.issuer.name}, ${note.issuer.address}, ${t.trn} ${note.issuer.trn}`)
  doc.text(`${t.client}: ${note.client.name}`)
  doc.moveDown()
  for (const l of note.lines)
    doc.text(
      `${l.position}. ${l.description} | ${t.net} ${l.net.display} | ${t.vat} ${l.vat.display} | ${t.gross} ${l.gross.display}`,
    )
  doc.moveDown()
  doc.font('Helvetica-Bold')
  doc.text(
    `${t.totals}: ${t.net} ${note.totals.net.display} | ${t.vat} ${note.totals.vat.display} | ${t.gross} ${note.totals.gross.display}`,
  )
  doc.end()
  return done
}
