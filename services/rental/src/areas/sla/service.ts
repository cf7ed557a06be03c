import { randomUUID } from 'node:crypto'
import type { Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { readParts } from '@svc/kit'
import {
  DEFAULT_SERVICE_LEVELS,
  type EngagementRow,
  type EngagementService,
  type ServiceLevels,
  type SlaBody,
} from '../engagements/index.ts'
import { type Consumer, type EventService, SYSTEM } from '../events/index.ts'
import type { IncidentService } from '../incidents/index.ts'
import type { OrgService } from '../orgs/index.ts'
import type { TaskService } from '../tasks/index.ts'
import { creditView } from './credit-view.ts'
import { type Ended, measure, type Measurement } from './measure.ts'
import * as store from './store.ts'
import type { SlaCreditRow, SlaEventRow, SlaEventType } from './store.ts'

export interface SlaDeps {
  ctx: Pick<RentalContext, 'db' | 'now' | 'rail' | 'receipts' | 'log' | 'config'>
  engagements: EngagementService
  events: EventService
  tasks: TaskService
  incidents: IncidentService
  orgs: OrgService
}

/** The consumer's name in the event log (its cursor). */
export const CONSUMER = 'sla'

/** The engagement's terms: those its SLA body carries, or the defaults for one signed before terms existed. */
export function levelsOf(body: SlaBody): { levels: ServiceLevels; defaulted: boolean } {
  return body.service_levels
    ? { levels: body.service_levels, defaulted: false }
    : { levels: DEFAULT_SERVICE_LEVELS, defaulted: true }
}

const DAY_MS = 86_400_000

/**
 * A completed task's time span: completed_at − started_at (created_at when it never started), the
 * very values its `task.completed` receipt carries, written from these columns in the same transaction.
 */
function latencyOf(t: {
  started_at: Date | null
  created_at: Date
  completed_at: Date | null
}): number | null {
  if (!t.completed_at) return null
  return Math.max(0, t.completed_at.getTime() - (t.started_at ?? t.created_at).getTime())
}

/**
 * The engagement's term states and its terms measured now, read in `db` (the consumer's
 * transaction, or the pool) in one statement: the states, the tasks' windows, the incidents.
 */
export async function measureEngagement(deps: SlaDeps, db: RentalDb, engagement: EngagementRow) {
  const { levels } = levelsOf(engagement.sla as SlaBody)
  const now = deps.ctx.now()
  const windowStart = new Date(now.getTime() - levels.availability_window_days * DAY_MS)
  const { states, windows, incidents } = await readParts(db, {
    states: store.statesPart(db, engagement.id),
    windows: deps.tasks.slaWindowsPart(engagement.id, {
      latency: levels.latency_window_tasks,
      success: levels.success_window_tasks,
      since: windowStart,
    }),
    incidents: deps.incidents.responseTimesPart(db, {
      orgId: engagement.org_id,
      engagementId: engagement.id,
      agentDid: engagement.agent_did,
      since: windowStart,
      now,
    }),
  })
  const { completed: completedRows, ended: endedRows, recent } = windows
  const ended = (t: (typeof endedRows)[number]): Ended => ({
    id: t.id,
    state: t.state as Ended['state'],
    leafHash: t.receipt_leaf_hash,
    latencyMs: t.state === 'completed' && t.receipt_id ? latencyOf(t) : null,
  })
  const measurements = measure(levels, {
    completed: completedRows.map(ended),
    ended: endedRows.map(ended),
    recent,
    incidents,
  })
  return { states, measurements }
}

/** The event's data: what was measured against what, over which window, and the tasks and receipts behind it. */
const eventData = (engagementId: string, m: Measurement) => ({
  engagement_id: engagementId,
  term: m.term,
  measured: m.measured,
  target: m.target,
  unit: m.unit,
  rule: m.rule,
  window: m.window,
  evidence: m.evidence,
})

/**
 * Re-measures the engagement and records each change of a term's state once: `sla.breached`
 * when a met (or never measured) term is breached, `sla.restored` when a breached one is met again.
 * The engagement's row is locked first, so the consumer and the sweep of unanswered incidents
 * record one change once.
 */
export async function remeasure(deps: SlaDeps, trx: RentalDb, orgId: string, engagementId: string) {
  const engagement = await deps.engagements.engagementOf(orgId, engagementId, { trx, lock: true })
  if (!engagement) return
  // read in a statement after the lock: what a measure that held it before committed is seen
  const { states, measurements } = await measureEngagement(deps, trx, engagement)
  const breachedNow = new Map(states.map((s) => [s.term, s.breached] as const))
  const now = deps.ctx.now()
  for (const m of measurements) {
    if (m.status !== 'met' && m.status !== 'breached') continue
    const breached = m.status === 'breached'
    if (breached === (breachedNow.get(m.term) ?? false)) continue
    const type: SlaEventType = breached ? 'sla.breached' : 'sla.restored'
    const data = eventData(engagement.id, m)
    const { id: eventId } = await deps.events.record(trx, {
      orgId: engagement.org_id,
      type,
      stream: engagement.id,
      subjects: { engagement_id: engagement.id },
      actor: SYSTEM,
      data,
    })
    await store.insertSlaEvent(trx, {
      id: `slae_${randomUUID()}`,
      org_id: engagement.org_id,
      engagement_id: engagement.id,
      type,
      term: m.term,
      measured: m.measured,
      target: m.target,
      measurement: JSON.stringify(data),
      event_id: eventId,
      created_at: now,
    })
    await store.setState(trx, { engagement_id: engagement.id, term: m.term, breached, since: now })
  }
}

const INCIDENT_EVENTS = new Set(['incident.reported', 'incident.noted', 'incident.resolved'])

/**
 * The log's `sla` consumer: every task of an engagement that completes or fails, and every report,
 * note and resolution of an incident about it (or about its agent), re-measures the engagement
 * (once a batch).
 */
export function slaConsumer(deps: SlaDeps): Consumer {
  return async (trx, events) => {
    const touched = new Map<string, string>()
    for (const e of events) {
      const to = (e.data as { to?: unknown } | null)?.to
      const engagementId = e.subjects.engagement_id
      if (!e.org_id) continue
      if (e.type === 'task.state_changed' && (to === 'completed' || to === 'failed')) {
        if (engagementId) touched.set(engagementId, e.org_id)
      } else if (INCIDENT_EVENTS.has(e.type)) {
        if (engagementId) touched.set(engagementId, e.org_id)
        else if (e.subjects.agent_did)
          for (const g of await deps.engagements.engagementsWith(e.org_id, e.subjects.agent_did, { trx }))
            touched.set(g.id, e.org_id)
      }
    }
    for (const [engagementId, orgId] of touched) await remeasure(deps, trx, orgId, engagementId)
  }
}

/**
 * An unanswered incident breaches the term once it waited past the target, with no event to
 * re-measure on: the credit job's pass re-measures the engagements of open unanswered incidents
 * (each in its own transaction).
 */
export async function remeasureUnanswered(deps: SlaDeps, limit = 100) {
  const touched = new Map<string, string>()
  for (const i of await deps.incidents.unanswered(deps.ctx.db, limit)) {
    if (!i.org_id) continue
    if (i.engagement_id) touched.set(i.engagement_id, i.org_id)
    else if (i.agent_did)
      for (const g of await deps.engagements.engagementsWith(i.org_id, i.agent_did))
        touched.set(g.id, i.org_id)
  }
  for (const [engagementId, orgId] of touched)
    await inTransaction(deps.ctx.db, (trx) => remeasure(deps, trx, orgId, engagementId))
}

const notFound = (id: string) => rentalError('engagement_not_found', `no engagement ${id}`)

/** GET /api/engagements/{id}/sla: the signed SLA, its terms, their current measurements and open breaches. */
export async function slaOf(deps: SlaDeps, orgId: string, id: string) {
  const engagement = await deps.engagements.engagementOf(orgId, id)
  if (!engagement) throw notFound(id)
  const body = engagement.sla as SlaBody
  const { levels, defaulted } = levelsOf(body)
  const measured = await measureEngagement(deps, deps.ctx.db, engagement)
  const states = new Map(measured.states.map((s) => [s.term, s] as const))
  const credits = (await store.creditsOfEngagement(deps.ctx.db, id)).map(creditView)
  const measurements = measured.measurements.map((m) => {
    const state = states.get(m.term)
    return { ...m, breached_since: state?.breached ? state.since.toISOString() : null }
  })
  return {
    engagement_id: id,
    sla: {
      body,
      hash: engagement.sla_hash,
      signatures: engagement.sla_signature
        ? [{ signer: engagement.client_did, signature: engagement.sla_signature }]
        : [],
      signed: engagement.sla_signature !== null,
    },
    service_levels: levels,
    defaulted,
    measured_at: deps.ctx.now().toISOString(),
    measurements,
    credits: {
      count: credits.length,
      total_fils: credits.reduce((sum, c) => sum + c.amount_fils, 0),
      items: credits,
    },
  }
}

export function slaEventView(row: SlaEventRow, credit?: SlaCreditRow) {
  const data = row.measurement as ReturnType<typeof eventData>
  return {
    id: row.id,
    event_id: row.event_id,
    type: row.type,
    engagement_id: row.engagement_id,
    term: data.term,
    measured: row.measured === null ? null : Number(row.measured),
    target: Number(row.target),
    unit: data.unit,
    rule: data.rule,
    window: data.window,
    evidence: data.evidence,
    created_at: row.created_at.toISOString(),
    // a breach's credit once its period ended and the job posted it; a restoration has none
    credit: credit ? creditView(credit) : null,
  }
}

export interface SlaEventQuery {
  engagement_id?: string | undefined
  type?: SlaEventType | undefined
  from?: string | undefined
  to?: string | undefined
}

const dateOf = (name: string, value: string | undefined) => {
  if (value === undefined) return undefined
  const at = new Date(value)
  if (Number.isNaN(at.getTime()))
    throw rentalError('invalid_request', `querystring.${name} is not a date-time`)
  return at
}

/** GET /api/sla/events: the organization's breaches and restorations, newest first. */
export async function slaEvents(deps: SlaDeps, orgId: string, query: SlaEventQuery, page: Page) {
  const from = dateOf('from', query.from)
  const to = dateOf('to', query.to)
  if (from && to && from.getTime() > to.getTime())
    throw rentalError('invalid_request', 'querystring.from is after querystring.to')
  if (query.engagement_id !== undefined && !(await deps.engagements.engagementOf(orgId, query.engagement_id)))
    throw notFound(query.engagement_id)
  const { rows, total } = await store.slaEventsOf(
    deps.ctx.db,
    { orgId, engagementId: query.engagement_id, type: query.type, from, to },
    page.limit,
    page.offset,
  )
  const credits = new Map(
    (
      await store.creditsOfBreaches(
        deps.ctx.db,
        rows.map((r) => r.id),
      )
    ).map((c) => [c.sla_event_id, c]),
  )
  return {
    events: rows.map((r) => slaEventView(r, credits.get(r.id))),
    total,
    limit: page.limit,
    offset: page.offset,
  }
}
