import { csvLine, formatMoney, type MoneyLocale } from '@svc/kit'
import type { Statement } from './service.ts'

export const STATEMENT_COLUMNS = [
  'at',
  'kind',
  'transfer_id',
  'transfer_kind',
  'wallet_fils',
  'wallet',
  'held_fils',
  'held',
  'counter_account_kind',
  'counter_account',
  'escrow_id',
  'engagement_id',
  'task_id',
  'receipt_leaf_hashes',
] as const

/**
 * The statement as CSV (RFC 4180, the kit's writer: CRLF, quoting, formula guard): a header, an
 * `opening` row at `from`, one row per movement, a `closing` row at `to`. Receipt leaf hashes are
 * space-separated, each as `<type>=<leaf hash>`.
 */
export function statementCsv(s: Statement, locale: MoneyLocale): string {
  const d = (fils: number) => formatMoney(fils, 'AED', locale)
  const balance = (kind: string, at: Date, b: { wallet: number; held: number }) =>
    csvLine([
      at.toISOString(),
      kind,
      '',
      '',
      String(b.wallet),
      d(b.wallet),
      String(b.held),
      d(b.held),
      '',
      '',
      '',
      '',
      '',
      '',
    ])
  return [
    csvLine([...STATEMENT_COLUMNS]),
    balance('opening', s.from, s.opening),
    ...s.lines.map((l) =>
      csvLine([
        l.at.toISOString(),
        l.kind,
        l.transfer_id,
        l.transfer_kind,
        String(l.wallet_fils),
        d(l.wallet_fils),
        String(l.held_fils),
        d(l.held_fils),
        l.counter_account_kind ?? '',
        l.counter_account ?? '',
        l.escrow_id ?? '',
        l.engagement_id ?? '',
        l.task_id ?? '',
        l.receipts.map((r) => `${r.type}=${r.leaf_hash}`).join(' '),
      ]),
    ),
    balance('closing', s.to, s.closing),
  ].join('')
}
