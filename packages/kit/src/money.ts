/**
 * Money as the APIs show it: integer minor units (`amount_fils`), the currency, and a `display`
 * string a person reads ("AED 60.00"; in Arabic with Arabic-Indic digits and the dirham sign).
 * The amount is formatted from its exact decimal string, never from a float division.
 */
export type MoneyLocale = 'en' | 'ar'

const MINOR_DIGITS: Record<string, number> = { AED: 2 }

const formatters = new Map<string, Intl.NumberFormat>()
function formatter(currency: string, locale: MoneyLocale) {
  const key = `${currency}:${locale}`
  let f = formatters.get(key)
  if (!f) {
    f = new Intl.NumberFormat(locale === 'ar' ? 'ar-AE-u-nu-arab' : 'en-AE', { style: 'currency', currency })
    formatters.set(key, f)
  }
  return f
}

/** The exact decimal string of an amount in minor units: 6000 → "60.00", -5 → "-0.05". */
export function minorToDecimal(amount: number | bigint, currency = 'AED'): string {
  const digits = MINOR_DIGITS[currency] ?? 2
  const value = BigInt(amount)
  const sign = value < 0n ? '-' : ''
  const abs = (value < 0n ? -value : value).toString().padStart(digits + 1, '0')
  return `${sign}${abs.slice(0, abs.length - digits)}.${abs.slice(abs.length - digits)}`
}

/** "AED 60.00" (en, a no-break space after AED) or "‏٦٠٫٠٠ د.إ.‏" (ar) for 6000 fils. */
export function formatMoney(amount: number | bigint, currency = 'AED', locale: MoneyLocale = 'en'): string {
  // Intl formats a decimal string exactly (no float rounding past 2^53 / 100)
  return formatter(currency, locale).format(minorToDecimal(amount, currency) as unknown as number)
}

/** An amount as every money field shows it: `{ amount_fils, currency, display }`. */
export function money(amountFils: number, currency = 'AED', locale: MoneyLocale = 'en') {
  return { amount_fils: amountFils, currency, display: formatMoney(amountFils, currency, locale) }
}

/**
 * The locale a reader wants money in: `lang` when given, else the request's `?lang=`, else the
 * signed-in member's stored language (the rental's `request.membership.locale`), else Arabic when
 * `Accept-Language` puts it first, else English.
 */
export function moneyLocaleOf(
  request: {
    query?: unknown
    headers: Record<string, string | string[] | undefined>
    membership?: { locale?: unknown } | null
  },
  lang?: MoneyLocale,
): MoneyLocale {
  if (lang) return lang
  const asked = (request.query as { lang?: unknown } | undefined)?.lang
  if (asked === 'ar' || asked === 'en') return asked
  const stored = request.membership?.locale
  if (stored === 'ar' || stored === 'en') return stored
  const accept = request.headers['accept-language']
  return typeof accept === 'string' && /^\s*ar\b/i.test(accept) ? 'ar' : 'en'
}

/** UAE VAT, 5 %, in basis points. */
export const VAT_RATE_BPS = 500

/**
 * The VAT inside a VAT-inclusive amount: gross × rate / (1 + rate), rounded half-up to the fil with
 * integer arithmetic (BigInt: exact up to 2^53). 2625 fils at 5 % hold 125 of VAT.
 */
export function vatIncluded(grossFils: number, rateBps = VAT_RATE_BPS): number {
  if (!Number.isSafeInteger(grossFils) || grossFils < 0)
    throw new RangeError(`${grossFils} is not a fils amount`)
  const denominator = BigInt(10_000 + rateBps)
  return Number((BigInt(grossFils) * BigInt(rateBps) * 2n + denominator) / (2n * denominator))
}

/**
 * The VAT share of `partFils` of an amount `wholeFils` that held `vatFils`: part × vat / whole,
 * rounded half-up. The share of the whole is its VAT exactly, and of nothing 0, so the shares of
 * parts taken in turn (each the share of the running total less that of the total before) add up
 * to the whole's VAT: refunds of a payment never take back more VAT than it held.
 */
export function vatShareOf(partFils: number, wholeFils: number, vatFils: number): number {
  if (wholeFils <= 0 || vatFils <= 0) return 0
  return Number((BigInt(partFils) * BigInt(vatFils) * 2n + BigInt(wholeFils)) / (2n * BigInt(wholeFils)))
}
