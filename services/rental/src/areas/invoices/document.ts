import { html, Html, type MoneyLocale, pageCsp } from '@svc/kit'
import PDFDocument from 'pdfkit'

/** The labels every tax document has; a kind adds its own (due date, refund, …). */
export interface DocumentLabels {
  title: string
  number: string
  issued: string
  issuer: string
  client: string
  trn: string
  item: string
  net: string
  vat: string
  gross: string
  totals: string
}

type Amount = { display: string }

/** What an invoice and a credit note both show: number, parties, lines and totals (amounts displayed). */
export interface DocumentView {
  number: string
  issued_at: string
  issuer: { name: string; address: string; trn: string }
  client: { name: string }
  lines: Array<{
    position: number
    description: string
    agent_did: string
    net: Amount
    vat: Amount
    gross: Amount
  }>
  totals: { net: Amount; vat: Amount; gross: Amount }
}

/** A kind of tax document: its labels in both languages and the facts it states under its number. */
export interface DocumentKind<V extends DocumentView, L extends DocumentLabels> {
  labels: Record<MoneyLocale, L>
  /** The page's lines under the number, each one paragraph (already `html`). */
  htmlFacts(view: V, t: L, locale: MoneyLocale): Html[]
  /** The PDF's lines under the number (English). */
  pdfFacts(view: V, t: L): string[]
}

export const day = (iso: string, locale: MoneyLocale) =>
  new Intl.DateTimeFormat(locale === 'ar' ? 'ar-AE-u-nu-arab' : 'en-AE', {
    dateStyle: 'long',
    timeZone: 'UTC',
  }).format(new Date(iso))

/** The printable page of a document (the view is in `locale`'s money already); everything escaped. */
const DOCUMENT_STYLE = `body{font-family:system-ui,sans-serif;max-width:56rem;margin:2rem auto}table{width:100%;border-collapse:collapse}
td,th{border-bottom:1px solid #ccc;padding:.4rem;text-align:start}td.n{text-align:end}@media print{body{margin:0}}`

/** The HTML document's policy: the kit's, with its one inline style by its hash. */
export const DOCUMENT_CSP = pageCsp({ styles: [DOCUMENT_STYLE] })

export function documentHtml<V extends DocumentView, L extends DocumentLabels>(
  kind: DocumentKind<V, L>,
  view: V,
  locale: MoneyLocale,
): string {
  const t = kind.labels[locale]
  return html`<!doctype html>
<html lang="${locale}" dir="${locale === 'ar' ? 'rtl' : 'ltr'}">
<head><meta charset="utf-8"><title>${t.title} ${view.number}</title>
<style>${new Html(DOCUMENT_STYLE)}</style></head>
<body>
<h1>${t.title}</h1>
<p>${t.number}: <strong>${view.number}</strong></p>
${kind.htmlFacts(view, t, locale).map(
  (fact) => html`<p>${fact}</p>
`,
)}<section><h2>${t.issuer}</h2><p>${view.issuer.name}<br>${view.issuer.address}<br>${t.trn}: ${view.issuer.trn}</p></section>
<section><h2>${t.client}</h2><p>${view.client.name}</p></section>
<table>
<thead><tr><th>#</th><th>${t.item}</th><th>${t.net}</th><th>${t.vat}</th><th>${t.gross}</th></tr></thead>
<tbody>${view.lines.map(
    (l) =>
      html`<tr><td>${l.position}</td><td>${l.description}<br><small>${l.agent_did}</small></td><td class="n">${l.net.display}</td><td class="n">${l.vat.display}</td><td class="n">${l.gross.display}</td></tr>`,
  )}</tbody>
<tfoot><tr><th colspan="2">${t.totals}</th><td class="n">${view.totals.net.display}</td><td class="n">${view.totals.vat.display}</td><td class="n">${view.totals.gross.display}</td></tr></tfoot>
</table>
</body></html>`.value
}

/**
 * The document as a PDF in English (pdfkit's built-in fonts, uncompressed content so its text can
 * be read back); the Arabic PDF is pdf-rtl.ts's (an embedded Arabic font, right to left).
 */
export function documentPdf<V extends DocumentView, L extends DocumentLabels>(
  kind: DocumentKind<V, L>,
  view: V,
): Promise<Buffer> {
  const t = kind.labels.en
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    compress: false,
    info: { Title: `${t.title} ${view.number}` },
  })
  const chunks: Buffer[] = []
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c))
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
  })
  doc.font('Helvetica-Bold').fontSize(18).text(t.title)
  doc.font('Helvetica').fontSize(10).moveDown()
  doc.text(`${t.number}: ${view.number}`)
  for (const fact of kind.pdfFacts(view, t)) doc.text(fact)
  doc.moveDown()
  doc.text(`${t.issuer}: ${view.issuer.name}, ${view.issuer.address}, ${t.trn} ${view.issuer.trn}`)
  doc.text(`${t.client}: ${view.client.name}`)
  doc.moveDown()
  for (const l of view.lines)
    doc.text(
      `${l.position}. ${l.description} | ${t.net} ${l.net.display} | ${t.vat} ${l.vat.display} | ${t.gross} ${l.gross.display}`,
    )
  doc.moveDown()
  doc.font('Helvetica-Bold')
  doc.text(
    `${t.totals}: ${t.net} ${view.totals.net.display} | ${t.vat} ${view.totals.vat.display} | ${t.gross} ${view.totals.gross.display}`,
  )
  doc.end()
  return done
}
