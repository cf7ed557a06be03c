/**
 * Checks a receipt bundle offline: `npm run verify -- bundle.json [--log-key <verifier key>]`; given an
 * engagement's export (svc-engagement-export/v1), every receipt in it.
 * Exit code 0 when every check passes, 1 when one fails, 2 for a usage error.
 */
import { readFileSync } from 'node:fs'
import { type ReceiptBundle, verifyReceiptBundle } from '../packages/trust/src/bundle.ts'

const args = process.argv.slice(2)
const keyAt = args.indexOf('--log-key')
const logKey = keyAt >= 0 ? args[keyAt + 1] : undefined
const file = args.find((a, i) => !a.startsWith('--') && (keyAt < 0 || i !== keyAt + 1))
if (!file || (keyAt >= 0 && !logKey)) {
  console.error('usage: ledger-verify BUNDLE.json [--log-key <signed-note verifier key>]')
  process.exit(2)
}
let bundle: ReceiptBundle
try {
  bundle = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8')) as ReceiptBundle
} catch (err) {
  console.error(`cannot read ${file}: ${(err as Error).message}`)
  process.exit(2)
}
// an engagement's export (svc-engagement-export/v1): every receipt in it, each a bundle once logged
type Exported = { id: string; of: string; state: string; bundle?: ReceiptBundle; problem?: string }
const doc = bundle as unknown as { format?: string; receipts?: Exported[] }
const bundles: Array<{ name: string; bundle?: ReceiptBundle; problem?: string }> =
  doc.format === 'svc-engagement-export/v1'
    ? (doc.receipts ?? []).map((r) => ({ name: `${r.of} ${r.id}`, bundle: r.bundle, problem: r.problem }))
    : [{ name: '', bundle }]
let ok = bundles.length > 0 || doc.format === 'svc-engagement-export/v1'
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
