/** IBAN (ISO 13616): lengths by country and the mod-97 check (ISO 7064 MOD 97-10). */

export const IBAN_LENGTHS: Record<string, number> = {
  AE: 23,
  SA: 24,
  QA: 29,
  KW: 30,
  BH: 22,
  OM: 23,
  JO: 30,
  EG: 29,
  GB: 22,
  IE: 22,
  DE: 22,
  FR: 27,
  NL: 18,
  BE: 16,
  ES: 24,
  IT: 27,
  PT: 25,
  CH: 21,
  AT: 20,
  LU: 20,
  PL: 28,
  SE: 24,
  NO: 15,
  DK: 18,
  FI: 18,
  TR: 26,
  PK: 24,
  LB: 28,
  IL: 23,
  GR: 27,
  CY: 28,
  MT: 31,
  CZ: 24,
  HU: 28,
  RO: 24,
  BG: 22,
  HR: 21,
  SI: 19,
  SK: 24,
}

/** True when the IBAN (no spaces, upper case) has its country's length and passes mod-97. */
export function ibanValid(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false
  const length = IBAN_LENGTHS[iban.slice(0, 2)]
  if (length !== undefined && iban.length !== length) return false
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  let remainder = 0
  for (const ch of rearranged) {
    const digits = /\d/.test(ch) ? ch : String(ch.charCodeAt(0) - 55)
    for (const d of digits) remainder = (remainder * 10 + Number(d)) % 97
  }
  return remainder === 1
}
