/**
 * Checks a receipt bundle offline: `npm run verify -- bundle.json [--log-key <verifier key>]`.
 * Exit code 0 when every check passes, 1 when one fails, 2 for a usage error.
 */
import { readFileSync } from 'node:fs'
import { type ReceiptBundle, verifyReceiptBundle } from '../packages/trust/src/bundle.ts'

const args = process.argv.slice(2)
const keyAt = args.indexOf('--log-key')
const logKey = keyAt >= 0 ? args[keyAt + 1] : undefined
const file = args.find((a, i) => !a.startsWith('--') && i !== keyAt + 1)
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
const verdict = verifyReceiptBundle(bundle, logKey)
for (const c of verdict.checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.check}: ${c.detail}`)
console.log(verdict.ok ? 'VERIFIED' : 'NOT VERIFIED')
process.exit(verdict.ok ? 0 : 1)
