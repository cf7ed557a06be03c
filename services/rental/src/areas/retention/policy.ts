import { rentalError } from '../../errors.ts'

const DAY = 86_400

/** The shortest and longest period an organization may keep a kind of data (1 day, 10 years of 365 days). */
export const BOUNDS = { min_s: DAY, max_s: 3650 * DAY } as const

/** What an organization keeps without a policy of its own. */
export const DEFAULTS = { tasks_s: 180 * DAY, files_s: 365 * DAY, events_s: 400 * DAY } as const

export const KINDS = ['tasks', 'files', 'events'] as const
export type Kind = (typeof KINDS)[number]

// weeks alone, or days and a time part; no years or months: their length in seconds is not fixed
const ISO = /^P(?:(\d{1,6})W|(?:(\d{1,6})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,12})S)?)?)$/

/**
 * A retention period: whole seconds, or an ISO 8601 duration of weeks, days, hours, minutes and
 * seconds (`P30D`, `PT36H`, `P1DT12H`, `P4W`); within BOUNDS. 400 `invalid_retention` otherwise.
 */
export function secondsOf(kind: Kind, value: number | string): number {
  let seconds: number
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value))
      throw rentalError('invalid_retention', `body.${kind} must be whole seconds or an ISO 8601 duration`)
    seconds = value
  } else {
    const m = ISO.exec(value)
    if (!m || value === 'P' || value.endsWith('T'))
      throw rentalError(
        'invalid_retention',
        `body.${kind} is not an ISO 8601 duration of weeks, days, hours, minutes and seconds (P30D, PT36H): years and months have no fixed length`,
      )
    const [, w, d, h, min, s] = m.map((x) => Number(x ?? 0))
    seconds = w! * 7 * DAY + d! * DAY + h! * 3600 + min! * 60 + s!
  }
  if (seconds < BOUNDS.min_s || seconds > BOUNDS.max_s)
    throw rentalError(
      'invalid_retention',
      `body.${kind} is ${seconds} s: a retention period is from ${BOUNDS.min_s} s (1 day) to ${BOUNDS.max_s} s (3650 days)`,
    )
  return seconds
}

/** Seconds as an ISO 8601 duration (`P180D`, `P1DT2H`). */
export function isoOf(seconds: number): string {
  const d = Math.floor(seconds / DAY)
  let rest = seconds % DAY
  const h = Math.floor(rest / 3600)
  rest %= 3600
  const m = Math.floor(rest / 60)
  const s = rest % 60
  const time = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${s}S` : ''}`
  return seconds === 0 ? 'PT0S' : `P${d ? `${d}D` : ''}${time ? `T${time}` : ''}`
}
