import { createHash } from 'node:crypto'
import { strToU8, type Zippable, zipSync } from 'fflate'
import type { InvoiceService } from '../invoices/index.ts'
import type { EngagementExport } from './export.ts'

/** One entry of the archive, as the manifest lists it (its SHA-256 lets a reader check it). */
interface Entry {
  path: string
  section: string
  bytes: number
  sha256: string
}

const json = (value: unknown) => strToU8(`${JSON.stringify(value, null, 2)}\n`)
/** A name safe in a zip path: the receipt's subject (`task:<id>`) with anything odd replaced. */
const safe = (name: string) => name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120)

/**
 * The export as a zip (fflate): `manifest.json` (the format, the engagement, every file with its
 * size and SHA-256, every receipt with the file of its bundle or why it is pending), one JSON file
 * per section, each logged receipt as `receipts/NNN-<subject>.bundle.json` (the ledger's
 * `svc-receipt-bundle/v1`, as `npm run verify` reads one alone), and the invoices' and credit
 * notes' PDFs as the invoices area renders them. Entries are dated at the export's time.
 */
export async function exportZip(doc: EngagementExport, invoices: Pick<InvoiceService, 'pdfOf'>) {
  const files: Array<{ path: string; section: string; data: Uint8Array }> = []
  const add = (path: string, section: string, data: Uint8Array) => files.push({ path, section, data })
  add('engagement.json', 'engagement', json(doc.engagement))
  add('sla.json', 'sla', json(doc.engagement.sla))
  add('addenda.json', 'addenda', json(doc.addenda))
  add('end.json', 'end', json(doc.end))
  add('tasks.json', 'tasks', json(doc.tasks))
  add('statement.json', 'statement', json(doc.statement))
  add('invoices.json', 'invoices', json({ invoices: doc.invoices, credit_notes: doc.credit_notes }))
  add('refunds.json', 'refunds', json(doc.refunds))
  add('disputes.json', 'disputes', json(doc.disputes))
  add('ratings.json', 'ratings', json({ ratings: doc.ratings, reference: doc.reference }))
  add('files.json', 'files', json(doc.files))
  for (const invoice of doc.invoices)
    add(`invoices/${safe(invoice.number)}.pdf`, 'invoices', await invoices.pdfOf(invoice))
  for (const note of doc.credit_notes)
    add(`credit-notes/${safe(note.number)}.pdf`, 'invoices', await invoices.pdfOf(note))
  const receipts = doc.receipts.map((r, i) => {
    if (r.state !== 'logged') return { id: r.id, of: r.of, state: r.state, problem: r.problem }
    const path = `receipts/${String(i + 1).padStart(3, '0')}-${safe(r.of)}.bundle.json`
    add(path, 'receipts', json(r.bundle))
    return { id: r.id, of: r.of, state: r.state, path }
  })
  const entries: Entry[] = files.map((f) => ({
    path: f.path,
    section: f.section,
    bytes: f.data.byteLength,
    sha256: createHash('sha256').update(f.data).digest('hex'),
  }))
  const manifest = {
    format: doc.format,
    exported_at: doc.exported_at,
    issuer: doc.issuer,
    ledger: doc.ledger,
    engagement_id: doc.engagement.id,
    files: entries,
    receipts,
  }
  const mtime = new Date(doc.exported_at)
  const tree: Zippable = { 'manifest.json': [json(manifest), { mtime }] }
  for (const f of files) tree[f.path] = [f.data, { mtime }]
  return Buffer.from(zipSync(tree))
}
