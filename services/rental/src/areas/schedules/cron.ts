import { Cron } from 'croner'
import { rentalError } from '../../errors.ts'

/** The most ticks a catch-up counts as missed (about 0.1 s of croner): a longer outage says this many. */
export const MISSED_COUNT_CAP = 1000

/** An IANA zone name: `Area/Location` (`America/Argentina/Buenos_Aires`), `UTC`, `Etc/GMT+4`; no offsets. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/

/** The zone as given when it is an IANA name the runtime knows, else 400 `invalid_timezone` naming it. */
export function checkZone(zone: string): string {
  const bad = () =>
    rentalError('invalid_timezone', `timezone ${JSON.stringify(zone)} is not an IANA time zone name`)
  if (!ZONE_NAME.test(zone)) throw bad()
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return zone
  } catch {
    throw bad()
  }
}

/**
 * The parsed expression (croner), or 400 `invalid_cron` naming it: exactly five fields (minute,
 * hour, day of month, month, day of week), so neither seconds nor nicknames (`@hourly`).
 */
export function parseCron(expression: string, zone: string): Cron {
  const fields = expression.trim().split(/\s+/)
  const bad = (why: string) => rentalError('invalid_cron', `cron ${JSON.stringify(expression)}: ${why}`)
  if (fields.length !== 5)
    throw bad(
      `${fields.length} field${fields.length === 1 ? '' : 's'}; a schedule takes 5 (minute hour day-of-month month day-of-week)`,
    )
  let cron: Cron
  try {
    cron = new Cron(fields.join(' '), { timezone: zone, paused: true })
  } catch (err) {
    throw bad((err as Error).message.replace(/^CronPattern: /, ''))
  }
  if (!cron.nextRun()) throw bad('it has no tick (a day that never comes)')
  return cron
}

/** The expression in its stored form: its five fields, one space apart. */
export const normalCron = (expression: string) => expression.trim().split(/\s+/).join(' ')

/** The first tick strictly after `from`, or null when the expression has none. */
export const nextTick = (cron: Cron, from: Date): Date | null => cron.nextRun(from)

/** The next `n` ticks after `from`. */
export const nextTicks = (cron: Cron, from: Date, n: number): Date[] => cron.nextRuns(n, from)

/**
 * After the due tick `tick`, at `now`: how many later ticks were due too (missed: not run), and
 * the first tick after `now` (the next to run).
 */
export function afterTick(cron: Cron, tick: Date, now: Date): { missed: number; next: Date | null } {
  let missed = 0
  let next = cron.nextRun(tick)
  while (next && next <= now && missed < MISSED_COUNT_CAP) {
    missed++
    next = cron.nextRun(next)
  }
  if (next && next <= now) next = cron.nextRun(now)
  return { missed, next }
}
