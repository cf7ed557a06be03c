import { randomBytes } from 'node:crypto'
import type { Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { TaskService } from '../tasks/index.ts'
import { checkZone, nextTick, nextTicks, normalCron, parseCron } from './cron.ts'
import * as store from './store.ts'
import type { CatchUp, ScheduleRow } from './store.ts'
import type { EventType } from '../events/index.ts'

/** What the schedules' rules work with: the context and the services of the areas they need. */
export interface ScheduleDeps extends RentalContext {
  engagements: EngagementService
  tasks: TaskService
  events: EventService
  /** Has this instance's scheduler look now: a schedule became active here (its tick may be near). */
  wakeScheduler?: () => void
}

/** Schedules an organization may hold at once (active or paused). */
export const MAX_SCHEDULES = 100

/** How many next ticks a schedule's view shows. */
const NEXT_RUNS = 5

export interface NewSchedule {
  engagement_id: string
  text: string
  cron: string
  timezone?: string | undefined
  name?: string | undefined
}

const newScheduleId = () => `sch_${randomBytes(12).toString('base64url')}`

/** A schedule as the API shows it: its next ticks (UTC), its state and what its ticks did. */
export function scheduleView(row: ScheduleRow) {
  const cron = parseCron(row.cron, row.timezone)
  const next = row.state === 'active' && row.next_run_at ? row.next_run_at : null
  return {
    id: row.id,
    name: row.name,
    engagement_id: row.engagement_id,
    text: row.text,
    cron: row.cron,
    timezone: row.timezone,
    state: row.state as 'active' | 'paused',
    paused_reason: row.paused_reason,
    next_runs: next ? [next, ...nextTicks(cron, next, NEXT_RUNS - 1)].map((d) => d.toISOString()) : [],
    fired_count: row.fired_count,
    failed_count: row.failed_count,
    missed_count: row.missed_count,
    last_tick_at: row.last_tick_at?.toISOString() ?? null,
    last_fired_at: row.last_fired_at?.toISOString() ?? null,
    last_task_id: row.last_task_id,
    last_error: row.last_error ? { message: row.last_error, at: row.last_error_at!.toISOString() } : null,
    catch_up: (row.catch_up as CatchUp | null) ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}
export type ScheduleView = ReturnType<typeof scheduleView>

/** The engagement a schedule makes tasks for: the organization's (404) and active (409), as for a task. */
async function activeEngagement(deps: ScheduleDeps, orgId: string, engagementId: string) {
  const engagement = await deps.engagements.engagementOf(orgId, engagementId)
  if (!engagement) throw rentalError('engagement_not_found', `no engagement ${engagementId}`)
  if (engagement.state !== 'active')
    throw rentalError('engagement_not_active', `the engagement is ${engagement.state}: sign its SLA first`)
  return engagement
}

/** A new active schedule: its expression and zone checked (400 naming them), its first tick after now. */
export async function createSchedule(deps: ScheduleDeps, orgId: string, input: NewSchedule, actor: Actor) {
  const timezone = checkZone(input.timezone ?? 'UTC')
  const cron = parseCron(input.cron, timezone)
  const engagement = await activeEngagement(deps, orgId, input.engagement_id)
  const now = deps.now()
  const row = await inTransaction(deps.db, async (trx) => {
    if ((await store.lockAndCount(trx, orgId)) >= MAX_SCHEDULES)
      throw rentalError('schedule_limit', `an organization holds at most ${MAX_SCHEDULES} schedules`)
    const made = await store.insertSchedule(trx, {
      id: newScheduleId(),
      org_id: orgId,
      engagement_id: engagement.id,
      name: input.name ?? null,
      text: input.text,
      cron: normalCron(input.cron),
      timezone,
      next_run_at: nextTick(cron, now)!,
      created_by: actor.id,
      at: now,
    })
    await record(deps, trx, made, 'schedule.created', actor, {
      cron: made.cron,
      timezone,
      next_run_at: made.next_run_at!.toISOString(),
    })
    return made
  })
  deps.wakeScheduler?.()
  return scheduleView(row)
}

export async function scheduleDetail(deps: ScheduleDeps, orgId: string, id: string) {
  const row = await store.scheduleOf(deps.db, orgId, id)
  if (!row) throw rentalError('schedule_not_found', `no schedule ${id}`)
  return scheduleView(row)
}

export async function scheduleList(deps: ScheduleDeps, orgId: string, page: Page) {
  const { rows, total } = await store.schedulesOf(deps.db, orgId, page.limit, page.offset)
  return { schedules: rows.map(scheduleView), total, limit: page.limit, offset: page.offset }
}

/** The schedule locked in `trx`, or 404. */
async function locked(trx: RentalDb, orgId: string, id: string) {
  const row = await store.scheduleOf(trx, orgId, id, true)
  if (!row) throw rentalError('schedule_not_found', `no schedule ${id}`)
  return row
}

/** Pauses an active schedule: no tick runs until it is resumed (409 naming the state otherwise). */
export async function pauseSchedule(deps: ScheduleDeps, orgId: string, id: string, actor: Actor) {
  const row = await inTransaction(deps.db, async (trx) => {
    const row = await locked(trx, orgId, id)
    if (row.state !== 'active')
      throw rentalError('schedule_not_active', `the schedule is ${row.state}: only an active one is paused`)
    const paused = await store.setState(trx, id, {
      state: 'paused',
      next_run_at: null,
      paused_reason: null,
      at: deps.now(),
    })
    await record(deps, trx, paused, 'schedule.paused', actor, {})
    return paused
  })
  return scheduleView(row)
}

/**
 * Resumes a paused schedule from now: its next tick is the first after now (the ticks it was paused
 * over are not run). Its engagement must still be active (404/409 as at creation).
 */
export async function resumeSchedule(deps: ScheduleDeps, orgId: string, id: string, actor: Actor) {
  const current = await store.scheduleOf(deps.db, orgId, id)
  if (!current) throw rentalError('schedule_not_found', `no schedule ${id}`)
  if (current.state === 'paused') await activeEngagement(deps, orgId, current.engagement_id)
  const row = await inTransaction(deps.db, async (trx) => {
    const row = await locked(trx, orgId, id)
    if (row.state !== 'paused')
      throw rentalError('schedule_not_paused', `the schedule is ${row.state}: only a paused one is resumed`)
    const now = deps.now()
    const next = nextTick(parseCron(row.cron, row.timezone), now)!
    const resumed = await store.setState(trx, id, {
      state: 'active',
      next_run_at: next,
      paused_reason: null,
      at: now,
    })
    await record(deps, trx, resumed, 'schedule.resumed', actor, { next_run_at: next.toISOString() })
    return resumed
  })
  deps.wakeScheduler?.()
  return scheduleView(row)
}

/** Deletes a schedule: no tick runs, and it is not found afterwards. */
export async function deleteSchedule(deps: ScheduleDeps, orgId: string, id: string, actor: Actor) {
  await inTransaction(deps.db, async (trx) => {
    await locked(trx, orgId, id)
    const deleted = await store.setState(trx, id, {
      state: 'deleted',
      next_run_at: null,
      paused_reason: null,
      at: deps.now(),
    })
    await record(deps, trx, deleted, 'schedule.deleted', actor, {})
  })
  return { id, deleted: true as const }
}

/** A schedule's event, in `trx`: about the schedule and its engagement. */
export const record = (
  deps: Pick<ScheduleDeps, 'events'>,
  trx: RentalDb,
  row: ScheduleRow,
  type: EventType,
  actor: Actor,
  data: Record<string, unknown>,
  subjects: Record<string, string> = {},
) =>
  deps.events.record(trx, {
    orgId: row.org_id,
    type,
    subjects: { schedule_id: row.id, engagement_id: row.engagement_id, ...subjects },
    actor,
    data,
  })
