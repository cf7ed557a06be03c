import { AppError, Pause } from '@svc/kit'
import { inTransaction } from '../../db.ts'
import type { Actor } from '../events/index.ts'
import { afterTick, parseCron } from './cron.ts'
import { record, type ScheduleDeps } from './service.ts'
import * as store from './store.ts'
import type { CatchUp, ScheduleRow } from './store.ts'

/** Due schedules one check takes (the rest wait for the next check). */
const BATCH = 50

/** A tick run later than this after its time is a catch-up (the rental was down), said in the record. */
export const LATE_MS = 60_000

/** Another instance claimed the tick first: its transaction made the task. */
class TickTaken extends Error {}

export type Fired = 'fired' | 'failed' | 'taken'

/**
 * Runs the schedule's due tick at `now`: one task, whatever the instances. The tick is claimed
 * (`next_run_at` moved on, conditionally) in the transaction that writes the task and its
 * `schedule.fired` event, so a crash before the commit leaves the tick due (retried), and of two
 * instances one claims it (the other finds it moved: `taken`). Ticks that fell due meanwhile are
 * not replayed: one run, a catch-up, counts them as missed. A task that cannot be made (the
 * engagement is no longer active, the agent revoked, the price over the limit) consumes the tick
 * with a `schedule.failed` event and pauses the schedule with the reason; another error keeps it
 * active (the next tick tries again).
 */
export async function fireTick(deps: ScheduleDeps, row: ScheduleRow, now: Date): Promise<Fired> {
  const tick = row.next_run_at!
  const { missed, next } = afterTick(parseCron(row.cron, row.timezone), tick, now)
  const catchUp: CatchUp | null =
    missed > 0 || now.getTime() - tick.getTime() > LATE_MS
      ? { tick_at: tick.toISOString(), missed, caught_up_at: now.toISOString() }
      : null
  const actor: Actor = { type: 'schedule', id: row.id }
  try {
    if (!next) throw new AppError(409, 'invalid_cron', 'the expression has no further tick')
    await deps.tasks.create(
      row.org_id,
      { engagement_id: row.engagement_id, text: row.text, async: true },
      actor,
      (taskId, write) =>
        inTransaction(deps.db, async (trx) => {
          if (!(await store.claimTick(trx, row.id, tick, next, now))) throw new TickTaken()
          await write(trx)
          await store.recordFired(trx, row.id, { taskId, at: now, catchUp })
          await record(
            deps,
            trx,
            row,
            'schedule.fired',
            actor,
            { task_id: taskId, tick_at: tick.toISOString(), catch_up: catchUp },
            { task_id: taskId },
          )
        }),
    )
    return 'fired'
  } catch (err) {
    if (err instanceof TickTaken) return 'taken'
    const error = (err as Error).message
    // the client's side of the task refused it: trying every tick would fail the same way
    // capacity_exceeded (429) is a passing refusal: the tick is consumed (schedule.failed), the schedule stays active
    const pause = err instanceof AppError && err.status < 500 && err.status !== 429
    const failed = await inTransaction(deps.db, async (trx) => {
      if (!(await store.claimTick(trx, row.id, tick, next ?? tick, now))) return false
      await store.recordFailed(trx, row.id, { error, at: now, pause: pause || !next, catchUp })
      await record(deps, trx, row, 'schedule.failed', actor, {
        tick_at: tick.toISOString(),
        error,
        paused: pause || !next,
        catch_up: catchUp,
      })
      return true
    })
    if (failed) deps.log.warn({ schedule: row.id, tick, err: error, paused: pause }, 'schedule tick failed')
    return failed ? 'failed' : 'taken'
  }
}

/** One look for due ticks: each due schedule's tick run (or found taken by another instance). */
export async function checkDue(deps: ScheduleDeps): Promise<void> {
  const now = deps.now()
  for (const row of await store.dueSchedules(deps.db, now, BATCH)) {
    try {
      await fireTick(deps, row, now)
    } catch (err) {
      // the failure could not be recorded either (the database): the tick stays due, tried again
      deps.log.warn({ schedule: row.id, err: (err as Error).message }, 'schedule tick not run')
    }
  }
}

/** The scheduler looks every RENTAL_SCHEDULE_CHECK_MS once the next tick is this near. */
const NEAR_MS = 60_000
/** The longest it sleeps otherwise (a schedule made active on another instance is seen by then). */
const RESTING_MS = 30_000

/** How long to sleep before the next look, given the earliest active schedule's next tick. */
function untilNextLook(nextRun: Date | undefined, now: Date, checkMs: number): number {
  if (!nextRun) return Math.max(checkMs, RESTING_MS)
  const ahead = nextRun.getTime() - now.getTime()
  return ahead <= NEAR_MS ? checkMs : Math.max(checkMs, Math.min(RESTING_MS, ahead - NEAR_MS))
}

/**
 * The scheduler of this instance: it runs the due ticks, every RENTAL_SCHEDULE_CHECK_MS while a
 * tick is near, else every half minute at most (a resting rental's cost), and at once when a
 * schedule is made or resumed here (`wake`). Every instance runs one; the claim makes each tick one
 * task. Ticks live in the table, not in memory, so a restart loses none (a long outage runs one
 * catch-up).
 */
export function startScheduler(deps: ScheduleDeps) {
  const checkMs = deps.config.scheduleCheckMs
  const pause = new Pause()
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      let sleep = checkMs
      try {
        await checkDue(deps)
        sleep = untilNextLook(await store.nextRunAt(deps.db), deps.now(), checkMs)
      } catch (err) {
        deps.log.warn({ err: (err as Error).message }, 'schedule check failed')
      }
      if (!stopped) await pause.sleep(sleep)
    }
  })()
  return {
    wake: () => pause.wake(),
    async stop() {
      stopped = true
      pause.wake()
      await loop
    },
  }
}
