/** Money in integer minor units: amounts are parsed from text exactly, never through floats. */

/** ISO 4217 currencies the skills recognise, with their minor-unit exponent. */
export const CURRENCIES: Record<string, number> = {
  AED: 2,
  SAR: 2,
  QAR: 2,
  USD: 2,
  EUR: 2,
  GBP: 2,
  INR: 2,
  CHF: 2,
  EGP: 2,
  PKR: 2,
  KWD: 3,
  BHD: 3,
  OMR: 3,
  JOD: 3,
  JPY: 0,
}

/** Words and symbols that name a currency in running text. */
export const CURRENCY_ALIASES: Record<string, string> = {
  dhs: 'AED',
  dh: 'AED',
  dirham: 'AED',
  dirhams: 'AED',
  'د.إ': 'AED',
  $: 'USD',
  '€': 'EUR',
  '£': 'GBP',
  riyal: 'SAR',
  riyals: 'SAR',
}

export function currencyOf(token: string): string | undefined {
  const upper = token.toUpperCase()
  if (upper in CURRENCIES) return upper
  return CURRENCY_ALIASES[token.toLowerCase()]
}

/**
 * A decimal written with optional thousands commas ("1,234.5") as minor units of a currency with
 * `exponent` decimals; undefined when it has more decimals than the currency allows.
 */
export function toMinor(text: string, exponent: number): number | undefined {
  const plain = text.replace(/,/g, '')
  const m = /^(\d+)(?:\.(\d+))?$/.exec(plain)
  if (!m) return undefined
  const decimals = m[2] ?? ''
  if (decimals.length > exponent) return undefined
  return Number(m[1]) * 10 ** exponent + Number(decimals.padEnd(exponent, '0') || '0')
}

/** Minor units back to a fixed-point decimal string ("1890.00"). */
export function formatMinor(minor: number, exponent: number): string {
  const sign = minor < 0 ? '-' : ''
  const abs = Math.abs(minor)
  if (exponent === 0) return `${sign}${abs}`
  const scale = 10 ** exponent
  return `${sign}${Math.floor(abs / scale)}.${String(abs % scale).padStart(exponent, '0')}`
}

/** a × b / d rounded half away from zero, in integers (quantities with decimals, VAT rates in basis points). */
export function mulDivRound(a: number, b: number, d: number): number {
  const product = BigInt(a) * BigInt(b)
  const q = product / BigInt(d)
  const r = product % BigInt(d)
  const abs = r < 0n ? -r : r
  const up = abs * 2n >= BigInt(d) ? (product < 0n ? -1n : 1n) : 0n
  return Number(q + up)
}
