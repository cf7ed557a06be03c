import { countedPageOfRows, OLDEST_FIRST } from '@svc/kit'
import type { Generated, Selectable } from 'kysely'
import { sql } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'

export type ScheduleState = 'active' | 'paused' | 'deleted'

/** The schedules area's table: each schedule, its next tick, and what its ticks did. */
export interface ScheduleTables {
  schedules: {
    id: string
    org_id: string
    engagement_id: string
    name: string | null
    text: string
    cron: string
    timezone: string
    state: ScheduleState
    next_run_at: Date | null
    paused_reason: string | null
    fired_count: Generated<number>
    failed_count: Generated<number>
    missed_count: Generated<number>
    last_fired_at: Date | null
    last_tick_at: Date | null
    last_task_id: string | null
    last_error: string | null
    last_error_at: Date | null
    catch_up: Json | null
    created_by: string | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
}

export type ScheduleRow = Selectable<ScheduleTables['schedules']>

/** What a catch-up run was: the tick it ran for, the ticks after it that it skipped, when it ran. */
export interface CatchUp {
  tick_at: string
  missed: number
  caught_up_at: string
}

export async function insertSchedule(
  db: RentalDb,
  row: {
    id: string
    org_id: string
    engagement_id: string
    name: string | null
    text: string
    cron: string
    timezone: string
    next_run_at: Date
    created_by: string | null
    at: Date
  },
): Promise<ScheduleRow> {
  const { at, ...values } = row
  return db
    .insertInto('schedules')
    .values({
      ...values,
      state: 'active',
      paused_reason: null,
      last_fired_at: null,
      last_tick_at: null,
      last_task_id: null,
      last_error: null,
      last_error_at: null,
      catch_up: null,
      created_at: at,
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** The organization's schedule (not a deleted one), or undefined; `lock` takes it FOR UPDATE. */
export const scheduleOf = (db: RentalDb, orgId: string, id: string, lock = false) => {
  let query = db
    .selectFrom('schedules')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .where('state', '<>', 'deleted')
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** A page of the organization's schedules, oldest first, and how many it has. */
export const schedulesOf = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  countedPageOfRows(
    db,
    {
      table: 'schedules',
      owner: ['org_id', orgId],
      where: (q) => q.where('state', '<>', 'deleted'),
      order: OLDEST_FIRST,
    },
    { limit, offset },
  )

/**
 * How many schedules (active or paused) the organization has, counted in `trx` under a lock of the
 * organization's schedules (a transaction-scoped advisory lock): two creations do not both pass the limit.
 */
export async function lockAndCount(trx: RentalDb, orgId: string) {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`schedules:${orgId}`}, 0))`.execute(trx)
  return countSchedules(trx, orgId)
}

/** How many schedules (active or paused) the organization has. */
export async function countSchedules(db: RentalDb, orgId: string) {
  const { n } = await db
    .selectFrom('schedules')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('org_id', '=', orgId)
    .where('state', '<>', 'deleted')
    .executeTakeFirstOrThrow()
  return Number(n)
}

/** Moves a schedule (locked by the caller) to `state`, with its next tick (null unless active). */
export const setState = (
  trx: RentalDb,
  id: string,
  change: { state: ScheduleState; next_run_at: Date | null; paused_reason: string | null; at: Date },
) =>
  trx
    .updateTable('schedules')
    .set({
      state: change.state,
      next_run_at: change.next_run_at,
      paused_reason: change.paused_reason,
      updated_at: change.at,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()

/** Active schedules whose next tick is at or before `now`, the most overdue first. */
export const dueSchedules = (db: RentalDb, now: Date, limit: number) =>
  db
    .selectFrom('schedules')
    .selectAll()
    .where('state', '=', 'active')
    .where('next_run_at', '<=', now)
    .orderBy('next_run_at')
    .limit(limit)
    .execute()

/** The earliest next tick of the active schedules (undefined: none is active). */
export async function nextRunAt(db: RentalDb): Promise<Date | undefined> {
  const row = await db
    .selectFrom('schedules')
    .select((eb) => eb.fn.min('next_run_at').as('next'))
    .where('state', '=', 'active')
    .executeTakeFirst()
  return row?.next ? new Date(row.next) : undefined
}

/**
 * Claims the tick `tick` of a schedule: moves its next run on to `next`, only if it is still active
 * and `tick` is still its next run. Of two instances claiming one tick, the second waits for the
 * first's transaction on the row lock, then finds `next_run_at` moved and claims nothing.
 */
export async function claimTick(trx: RentalDb, id: string, tick: Date, next: Date, at: Date) {
  const claimed = await trx
    .updateTable('schedules')
    .set({ next_run_at: next, last_tick_at: tick, updated_at: at })
    .where('id', '=', id)
    .where('state', '=', 'active')
    .where('next_run_at', '=', tick)
    .returning('id')
    .executeTakeFirst()
  return claimed !== undefined
}

/** What the claimed tick did: a task made (and maybe a catch-up), counted. */
export const recordFired = (
  trx: RentalDb,
  id: string,
  fired: { taskId: string; at: Date; catchUp: CatchUp | null },
) =>
  trx
    .updateTable('schedules')
    .set({
      fired_count: sql`fired_count + 1`,
      last_fired_at: fired.at,
      last_task_id: fired.taskId,
      ...(fired.catchUp
        ? {
            catch_up: JSON.stringify(fired.catchUp),
            missed_count: sql`missed_count + ${fired.catchUp.missed}`,
          }
        : {}),
    })
    .where('id', '=', id)
    .execute()

/** What the claimed tick did: no task, the error kept; `pause` stops the schedule with it as the reason. */
export const recordFailed = (
  trx: RentalDb,
  id: string,
  failed: { error: string; at: Date; pause: boolean; catchUp: CatchUp | null },
) =>
  trx
    .updateTable('schedules')
    .set({
      failed_count: sql`failed_count + 1`,
      last_error: failed.error,
      last_error_at: failed.at,
      ...(failed.pause ? { state: 'paused', next_run_at: null, paused_reason: failed.error } : {}),
      ...(failed.catchUp
        ? {
            catch_up: JSON.stringify(failed.catchUp),
            missed_count: sql`missed_count + ${failed.catchUp.missed}`,
          }
        : {}),
    })
    .where('id', '=', id)
    .execute()
