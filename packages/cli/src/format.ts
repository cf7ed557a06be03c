/** How the command line writes things for a person: money as money, dates, columns, short ids. */
import { formatMoney } from '@svc/kit/money'

/** "AED 25.00" for 2500 fils (a plain space, for terminals and copy-paste). */
export const money = (fils: number, currency = 'AED') => formatMoney(fils, currency).replace(/\u00a0/g, ' ')

/** A date and time in UTC, to the minute: "2026-11-28 14:05 UTC". */
export const when = (iso: string | null | undefined) =>
  iso ? `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC` : ''

/** A long id (a did:key) shortened for a secondary place: `did:key:z6Mk…Xy3q`. */
export const short = (id: string) => (id.length > 28 ? `${id.slice(0, 16)}…${id.slice(-4)}` : id)

/** Rows as aligned columns (the first row the header). */
export function columns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)))
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  )
}

/** A task's state in words. */
export const STATE_WORDS: Record<string, string> = {
  submitted: 'submitted',
  working: 'working',
  'input-required': 'waiting for input',
  completed: 'completed',
  failed: 'failed',
  canceled: 'canceled',
  rejected: 'rejected',
}
export const stateWords = (state: string) => STATE_WORDS[state] ?? state
