/**
 * Checks a receipt bundle offline: `npm run verify -- bundle.json [--log-key <verifier key>]`; given an
 * engagement's export (svc-engagement-export/v1), every receipt in it, as JSON or as the zip
 * (`manifest.json`, each file checked against its SHA-256, each receipt's bundle file verified).
 * Exit code 0 when every check passes, 1 when one fails, 2 for a usage error.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { strFromU8, unzipSync } from 'fflate'
import { type ReceiptBundle, verifyReceiptBundle } from '../packages/trust/src/bundle.ts'

const EXPORT = 'svc-engagement-export/v1'
const args = process.argv.slice(2)
const keyAt = args.indexOf('--log-key')
const logKey = keyAt >= 0 ? args[keyAt + 1] : undefined
const file = args.find((a, i) => !a.startsWith('--') && (keyAt < 0 || i !== keyAt + 1))
if (!file || (keyAt >= 0 && !logKey)) {
  console.error(
    'usage: ledger-verify BUNDLE.json|EXPORT.json|EXPORT.zip [--log-key <signed-note verifier key>]',
  )
  process.exit(2)
}

type Exported = { id: string; of: string; state: string; bundle?: ReceiptBundle; problem?: string }
type Checked = { name: string; bundle?: ReceiptBundle; problem?: string }

let bytes: Buffer
try {
  bytes = readFileSync(file === '-' ? 0 : file)
} catch (err) {
  console.error(`cannot read ${file}: ${(err as Error).message}`)
  process.exit(2)
}

let ok = true
let bundles: Checked[]
try {
  bundles = isZip(bytes) ? fromZip(bytes) : fromJson(bytes)
} catch (err) {
  console.error(`cannot read ${file}: ${(err as Error).message}`)
  process.exit(2)
}
for (const { name, bundle: one, problem } of bundles) {
  const prefix = name ? `${name}: ` : ''
  if (!one) {
    ok = false
    console.log(`FAIL ${prefix}not on the ledger (${problem ?? 'no bundle'})`)
    continue
  }
  const verdict = verifyReceiptBundle(one, logKey)
  for (const c of verdict.checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${prefix}${c.check}: ${c.detail}`)
  ok &&= verdict.ok
}
console.log(ok ? 'VERIFIED' : 'NOT VERIFIED')
process.exit(ok ? 0 : 1)

function isZip(data: Buffer) {
  return data.length >= 4 && data.readUInt32LE(0) === 0x04034b50
}

/** A bundle alone, or an export's receipts (each a bundle once logged). */
function fromJson(data: Buffer): Checked[] {
  const doc = JSON.parse(data.toString('utf8')) as { format?: string; receipts?: Exported[] }
  if (doc.format !== EXPORT) return [{ name: '', bundle: doc as unknown as ReceiptBundle }]
  return (doc.receipts ?? []).map((r) => ({ name: `${r.of} ${r.id}`, bundle: r.bundle, problem: r.problem }))
}

/** The zipped export: its manifest, every listed file's size and digest, every receipt's bundle file. */
function fromZip(data: Buffer): Checked[] {
  const files = unzipSync(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
  const text = (path: string) => {
    const entry = files[path]
    if (!entry) throw new Error(`the archive has no ${path}`)
    return strFromU8(entry)
  }
  const manifest = JSON.parse(text('manifest.json')) as {
    format?: string
    files?: Array<{ path: string; bytes: number; sha256: string }>
    receipts?: Array<{ id: string; of: string; state: string; path?: string; problem?: string }>
  }
  if (manifest.format !== EXPORT) throw new Error(`manifest.json is not a ${EXPORT} manifest`)
  for (const f of manifest.files ?? []) {
    const entry = files[f.path]
    const digest = entry ? createHash('sha256').update(entry).digest('hex') : null
    const good = entry !== undefined && entry.byteLength === f.bytes && digest === f.sha256
    console.log(
      `${good ? 'ok  ' : 'FAIL'} file ${f.path}: ${good ? 'sha256 matches the manifest' : 'missing or altered'}`,
    )
    ok &&= good
  }
  return (manifest.receipts ?? []).map((r) => ({
    name: `${r.of} ${r.id}`,
    bundle: r.path ? (JSON.parse(text(r.path)) as ReceiptBundle) : undefined,
    problem: r.problem,
  }))
}
