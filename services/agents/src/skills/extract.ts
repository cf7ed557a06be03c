/**
 * Entities from the text of emails: addresses, dates, amounts with their currency and IBANs
 * (checked with mod-97). Pure and deterministic; each entity keeps the text it was read from.
 */
import { ibanValid, IBAN_LENGTHS } from './iban.ts'
import { CURRENCIES, currencyOf, formatMinor, toMinor } from './money.ts'

export interface Extraction {
  subject?: string
  emails: string[]
  dates: Array<{ text: string; date: string }>
  amounts: Array<{ text: string; currency: string; amount: string; minor: number }>
  ibans: Array<{ text: string; iban: string; country: string }>
  invalid_ibans: Array<{ text: string; reason: string }>
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const MONTH =
  '(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)'

/** A calendar date as YYYY-MM-DD, or undefined when it does not exist (31 February). */
function isoDate(year: number, month: number, day: number): string | undefined {
  if (month < 1 || month > 12 || day < 1 || year < 1000 || year > 9999) return undefined
  const d = new Date(Date.UTC(year, month - 1, day))
  if (d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return undefined
  return d.toISOString().slice(0, 10)
}
const monthNumber = (name: string) => MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1

// each form: the pattern and how its groups make a date; numeric day-first forms follow UAE usage
const DATE_FORMS: Array<[RegExp, (m: RegExpExecArray) => string | undefined]> = [
  [
    /\b(\d{4})-(\d{2})-(\d{2})(?:T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?\b/g,
    (m) => isoDate(+m[1]!, +m[2]!, +m[3]!),
  ],
  [/\b(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})\b/g, (m) => isoDate(+m[3]!, +m[2]!, +m[1]!)],
  [
    new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\.?,?\\s+(\\d{4})\\b`, 'gi'),
    (m) => isoDate(+m[3]!, monthNumber(m[2]!), +m[1]!),
  ],
  [
    new RegExp(`\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'gi'),
    (m) => isoDate(+m[3]!, monthNumber(m[1]!), +m[2]!),
  ],
]

function findDates(text: string): Extraction['dates'] {
  const found: Array<{ at: number; end: number; text: string; date: string }> = []
  for (const [pattern, make] of DATE_FORMS) {
    for (const m of text.matchAll(pattern)) {
      const at = m.index
      const end = at + m[0].length
      if (found.some((f) => at < f.end && end > f.at)) continue
      const date = make(m as RegExpExecArray)
      if (date) found.push({ at, end, text: m[0], date })
    }
  }
  return found.sort((a, b) => a.at - b.at).map(({ text, date }) => ({ text, date }))
}

const NUMBER = '(\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|\\d+(?:\\.\\d+)?)'
const CODES = `${Object.keys(CURRENCIES).join('|')}|Dhs?|dirhams?|riyals?`
const AMOUNT_BEFORE = new RegExp(`(?<![\\p{L}\\d])(${CODES}|[$€£])\\s?${NUMBER}(?![\\d\\p{L}])`, 'giu')
const AMOUNT_AFTER = new RegExp(`(?<![\\p{L}\\d.,])${NUMBER}\\s?(${CODES})(?![\\p{L}\\d])`, 'giu')

export function findAmounts(text: string): Extraction['amounts'] {
  const found: Array<{ at: number; end: number } & Extraction['amounts'][number]> = []
  const add = (at: number, raw: string, symbol: string, number: string) => {
    const end = at + raw.length
    if (found.some((f) => at < f.end && end > f.at)) return
    const currency = currencyOf(symbol)
    if (!currency) return
    const exponent = CURRENCIES[currency]!
    const minor = toMinor(number, exponent)
    if (minor === undefined) return
    found.push({ at, end, text: raw, currency, amount: formatMinor(minor, exponent), minor })
  }
  for (const m of text.matchAll(AMOUNT_BEFORE)) add(m.index, m[0], m[1]!, m[2]!)
  for (const m of text.matchAll(AMOUNT_AFTER)) add(m.index, m[0], m[2]!, m[1]!)
  return found.sort((a, b) => a.at - b.at).map(({ at: _a, end: _e, ...amount }) => amount)
}

// two letters, two digits, then groups of letters and digits, possibly written in fours
const IBAN_CANDIDATE = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g

function findIbans(text: string): Pick<Extraction, 'ibans' | 'invalid_ibans'> {
  const ibans: Extraction['ibans'] = []
  const invalid: Extraction['invalid_ibans'] = []
  for (const m of text.matchAll(IBAN_CANDIDATE)) {
    let compact = m[0].replace(/ /g, '')
    const country = compact.slice(0, 2)
    const length = IBAN_LENGTHS[country]
    // a greedy match may take the next word ("… 32 AED"): cut at the country's length
    if (length !== undefined && compact.length > length) compact = compact.slice(0, length)
    let taken = 0
    let end = 0
    while (taken < compact.length) if (m[0][end++] !== ' ') taken++
    const original = text.slice(m.index, m.index + end)
    if (ibanValid(compact)) ibans.push({ text: original, iban: compact, country })
    // only what claims a known IBAN country is reported; other letter-digit runs are not IBANs
    else if (length !== undefined)
      invalid.push({
        text: original,
        reason: length !== undefined && compact.length !== length ? 'wrong length' : 'mod-97 check failed',
      })
  }
  return { ibans, invalid_ibans: invalid }
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g

export function extract(text: string): Extraction {
  const seen = new Set<string>()
  const emails: string[] = []
  for (const [email] of text.matchAll(EMAIL)) {
    if (seen.has(email.toLowerCase())) continue
    seen.add(email.toLowerCase())
    emails.push(email)
  }
  const subject = /^Subject:[ \t]*(.+)$/im.exec(text)?.[1]?.trim()
  return {
    ...(subject ? { subject } : {}),
    emails,
    dates: findDates(text),
    amounts: findAmounts(text),
    ...findIbans(text),
  }
}
