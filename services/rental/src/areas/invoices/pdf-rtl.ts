import PDFDocument from 'pdfkit'
import type { CreditNoteView } from './credit-notes.ts'
import { ARABIC_LETTER, type Direction, directionOf, layoutText, visualRuns } from './pdf-bidi.ts'
import { arabicFonts } from './pdf-fonts.ts'
import { day } from './document.ts'
import { CREDIT_NOTE_LABELS, INVOICE_LABELS } from './pdf-text.ts'
import type { InvoiceView } from './service.ts'
import { invoiceFacts } from './invoice-facts.ts'

interface Amounts {
  net: { display: string }
  vat: { display: string }
  gross: { display: string }
}

/** What an Arabic PDF shows, whichever document it is: its amounts are displayed in Arabic already. */
interface RtlDocument {
  title: string
  /** Lines "label: value" (the issuer's address without a label). */
  fields: Array<[string | undefined, string]>
  parties: Array<[string | undefined, string]>
  head: { item: string; net: string; vat: string; gross: string; totals: string }
  lines: Array<Amounts & { position: number; description: string }>
  totals: Amounts
}

type Doc = InstanceType<typeof PDFDocument>
const MARGIN = 50
const REGULAR = 'ar'
const BOLD = 'ar-bold'
const RULE = '#bbbbbb'

/**
 * pdfkit lays out a whole run at once (and fontkit shapes it) only when given features; fontkit
 * takes them as an object too, where `false` turns off the optional ligatures, whose one glyph for
 * two letters copies out of a right-to-left line reversed (lam-alef, required, stays). Fresh for
 * each call: fontkit writes into it.
 */
const options = () => ({
  features: { liga: false, dlig: false } as unknown as PDFKit.Mixins.OpenTypeFeatures[],
  lineBreak: false,
})

/** A piece of a line: a label in Arabic, or a value, an isolate of its own direction. */
interface Piece {
  text: string
  base: Direction
}

/** The font and size each document draws in now: the key of the widths' cache. */
const styles = new WeakMap<Doc, { font: string; size: number }>()
function style(doc: Doc, font: string, size: number) {
  styles.set(doc, { font, size })
  doc.font(font).fontSize(size)
}

/** Widths at size 1, by font and laid-out text: fontkit's shaping of Arabic takes milliseconds a run. */
const widths = new Map<string, number>()
function widthOfRun(doc: Doc, laid: string): number {
  const { font, size } = styles.get(doc)!
  const key = `${font}\u0000${laid}`
  let width = widths.get(key)
  if (width === undefined) {
    if (widths.size > 20_000) widths.clear()
    width = doc.widthOfString(laid, options()) / size
    widths.set(key, width)
  }
  return width * size
}

/** The runs of a line's pieces, left to right: a right-to-left paragraph draws its pieces from the right. */
const runsOf = (doc: Doc, pieces: Piece[]) =>
  [...pieces]
    .reverse()
    .flatMap((piece) => visualRuns(piece.text, piece.base))
    .map((run) => {
      const laid = layoutText(run)
      return { laid, width: widthOfRun(doc, laid) }
    })

const widthOf = (doc: Doc, pieces: Piece[]) => runsOf(doc, pieces).reduce((sum, r) => sum + r.width, 0)

/** One line drawn from its visual runs: at the right of [left, right] (the start in Arabic), or at its left. */
function drawLine(doc: Doc, pieces: Piece[], y: number, left: number, right: number, align: 'start' | 'end') {
  const runs = runsOf(doc, pieces)
  let x = align === 'start' ? right - runs.reduce((sum, r) => sum + r.width, 0) : left
  for (const run of runs) {
    doc.text(run.laid, x, y, options())
    x += run.width
  }
}

/**
 * The lines "label: value" takes in `width`, broken at spaces (a word wider than the width at a
 * character); the value keeps the direction of its first strong character on every line. A line's
 * width is its words' and spaces' (no letter joins across a space).
 */
function wrap(doc: Doc, label: string | undefined, value: string, width: number): Piece[][] {
  const base = directionOf(value)
  const lines: Piece[][] = []
  const labelled = label === undefined ? [] : [{ text: `${label}: `, base: 'rtl' as const }]
  const push = (text: string) => lines.push([...(lines.length === 0 ? labelled : []), { text, base }])
  const space = widthOf(doc, [{ text: ' ', base }])
  let line = ''
  let used = widthOf(doc, labelled)
  for (const word of value.split(/\s+/).filter(Boolean)) {
    const w = widthOf(doc, [{ text: word, base }])
    if (used + (line ? space : 0) + w <= width) {
      used += (line ? space : 0) + w
      line = line ? `${line} ${word}` : word
      continue
    }
    // a label whose value's first word does not fit beside it stands alone
    if (line || (lines.length === 0 && labelled.length > 0)) push(line)
    line = ''
    used = 0
    if (w <= width) {
      line = word
      used = w
      continue
    }
    for (const char of word) {
      const c = widthOf(doc, [{ text: char, base }])
      if (line && used + c > width) {
        push(line)
        line = ''
        used = 0
      }
      line += char
      used += c
    }
  }
  push(line)
  return lines
}

/** "label: value" (or a value alone) from the right margin, wrapped: the new y under it. */
function paragraph(
  doc: Doc,
  label: string | undefined,
  value: string,
  y: number,
  font: string,
  size: number,
) {
  style(doc, font, size)
  const right = doc.page.width - MARGIN
  for (const line of wrap(doc, label, value, right - MARGIN)) {
    drawLine(doc, line, y, MARGIN, right, 'start')
    y += doc.currentLineHeight(true) + 3
  }
  return y
}

/** Columns from the right: #, the item, then net, VAT and total (amounts at the cells' end, the left). */
function columns(doc: Doc) {
  const right = doc.page.width - MARGIN
  const amount = 100
  const position = 28
  const item = right - MARGIN - position - 3 * amount
  const edges = [position, item, amount, amount, amount].reduce<number[]>(
    (xs, w) => [...xs, xs.at(-1)! - w],
    [right],
  )
  return edges.slice(0, 5).map((r, i) => ({ right: r - 4, left: edges[i + 1]! + 4 }))
}

function row(doc: Doc, cells: string[], y: number, font: string): number {
  style(doc, font, 9)
  const cols = columns(doc)
  const lineHeight = doc.currentLineHeight(true)
  const wrapped = cells.map((cell, i) => wrap(doc, undefined, cell, cols[i]!.right - cols[i]!.left))
  const height = Math.max(...wrapped.map((lines) => lines.length)) * lineHeight + 8
  if (y + height > doc.page.height - MARGIN) return -1
  wrapped.forEach((lines, i) =>
    lines.forEach((line, n) =>
      drawLine(doc, line, y + 4 + n * lineHeight, cols[i]!.left, cols[i]!.right, i < 2 ? 'start' : 'end'),
    ),
  )
  const bottom = y + height
  doc
    .moveTo(MARGIN, bottom)
    .lineTo(doc.page.width - MARGIN, bottom)
    .lineWidth(0.5)
    .strokeColor(RULE)
    .stroke()
  return bottom
}

function table(doc: Doc, d: RtlDocument, top: number): void {
  const head = ['#', d.head.item, d.head.net, d.head.vat, d.head.gross]
  let y = row(doc, head, top, BOLD)
  const rows = d.lines.map((l) => ({
    cells: [String(l.position), l.description, l.net.display, l.vat.display, l.gross.display],
    font: REGULAR,
  }))
  rows.push({
    cells: ['', d.head.totals, d.totals.net.display, d.totals.vat.display, d.totals.gross.display],
    font: BOLD,
  })
  for (const r of rows) {
    let next = row(doc, r.cells, y, r.font)
    if (next < 0) {
      doc.addPage()
      y = row(doc, head, MARGIN, BOLD)
      next = row(doc, r.cells, y, r.font)
    }
    y = next
  }
}

/**
 * A glyph of two Arabic letters (lam-alef) maps to them in visual order: readers (poppler,
 * pdf.js) reverse a right-to-left line's text whole, which would swap them. pdfkit 0.17 keeps
 * each embedded font's map as `unicode[glyph] = code points` until `end()` writes it.
 */
function visualLigatures(doc: Doc) {
  const fonts = (doc as unknown as { _fontFamilies?: Record<string, { unicode?: number[][] }> })._fontFamilies
  // a font is there under its name and its PostScript name: each once
  for (const font of new Set(Object.values(fonts ?? {})))
    for (const codePoints of font.unicode ?? [])
      if (codePoints?.length > 1 && codePoints.every((c) => ARABIC_LETTER.test(String.fromCodePoint(c))))
        codePoints.reverse()
}

/** The document as a right-to-left PDF in IBM Plex Sans Arabic (uncompressed, as the English one). */
function rtlPdf(d: RtlDocument, title: string): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    compress: false,
    lang: 'ar',
    info: { Title: title },
  })
  const chunks: Buffer[] = []
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c))
    doc.on('end', () => resolve(Buffer.concat(chunks)))
    doc.on('error', reject)
  })
  const fonts = arabicFonts()
  doc.registerFont(REGULAR, fonts.regular)
  doc.registerFont(BOLD, fonts.bold)
  let y = paragraph(doc, undefined, d.title, MARGIN, BOLD, 18) + 8
  for (const [label, value] of d.fields) y = paragraph(doc, label, value, y, REGULAR, 10)
  y += 8
  for (const [label, value] of d.parties) y = paragraph(doc, label, value, y, REGULAR, 10)
  table(doc, d, y + 12)
  visualLigatures(doc)
  doc.end()
  return done
}

/** The issuer (name, address, TRN) and the client, as both documents list them. */
const partiesOf = (
  view: Pick<InvoiceView, 'issuer' | 'client'>,
  t: { issuer: string; trn: string; client: string },
): Array<[string | undefined, string]> => [
  [t.issuer, view.issuer.name],
  [undefined, view.issuer.address],
  [t.trn, view.issuer.trn],
  [t.client, view.client.name],
]

/** The invoice in Arabic (its view's amounts in Arabic: `invoiceOf(…, 'ar')`). */
export function arabicInvoicePdf(invoice: InvoiceView): Promise<Buffer> {
  const t = INVOICE_LABELS.ar
  return rtlPdf(
    {
      title: t.title,
      fields: [[t.number, invoice.number], ...invoiceFacts(invoice, t, 'ar')],
      parties: partiesOf(invoice, t),
      head: t,
      lines: invoice.lines,
      totals: invoice.totals,
    },
    `${t.title} ${invoice.number}`,
  )
}

/** The credit note in Arabic (its amounts, negative, in Arabic). */
export function arabicCreditNotePdf(note: CreditNoteView): Promise<Buffer> {
  const t = CREDIT_NOTE_LABELS.ar
  return rtlPdf(
    {
      title: t.title,
      fields: [
        [t.number, note.number],
        [t.issued, day(note.issued_at, 'ar')],
        [t.invoice, note.invoice ? note.invoice.number : t.noInvoice],
        [t.refund, note.refund_id],
        [t.reason, note.reason],
      ],
      parties: partiesOf(note, t),
      head: t,
      lines: note.lines,
      totals: note.totals,
    },
    `${t.title} ${note.number}`,
  )
}
