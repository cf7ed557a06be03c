/**
 * Result parsers registered on both backends so a query gives identical JavaScript values on
 * PGlite and PostgreSQL. Text forms come from PostgreSQL's output functions, the same on both.
 */
export const OID = { bytea: 17, int8: 20, date: 1082, timestamp: 1114, numeric: 1700 } as const

/** int8 becomes a number; a value past 2^53 would lose digits, so it is an error, not a silent rounding. */
export function parseInt8(text: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n))
    throw new RangeError(`int8 value ${text} is beyond JavaScript's safe integer range`)
  return n
}

export const parsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: parseInt8,
  // numeric keeps its exact decimal text; money is integer minor units in int8 columns, never numeric.
  [OID.numeric]: (text) => text,
  // a calendar date has no time zone: keep 'YYYY-MM-DD' rather than a local-midnight Date.
  [OID.date]: (text) => text,
  // timestamp without time zone is read as UTC on both backends.
  [OID.timestamp]: (text) => new Date(`${text.replace(' ', 'T')}Z`),
  [OID.bytea]: (text) => Buffer.from(text.slice(2), 'hex'),
}
