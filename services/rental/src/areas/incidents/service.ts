import { randomUUID } from 'node:crypto'
import type { Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { QueryPart } from '@svc/kit'
import type { CatalogueService } from '../catalogue/index.ts'
import { checkAgentDid, type EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import * as store from './store.ts'
import type { IncidentRow, IncidentState, NoteAuthor, NoteRow, Severity } from './store.ts'

export interface IncidentDeps {
  ctx: Pick<RentalContext, 'db' | 'now' | 'sessions'>
  engagements: EngagementService
  catalogue: Pick<CatalogueService, 'agent'>
  events: EventService
}

/** Who acts: their organization, whether they are one of the platform's operators, and who they are. */
export interface Caller {
  orgId: string
  operator: boolean
  actor: Actor
}

const notFound = (id: string) => rentalError('incident_not_found', `no incident ${id}`)

/** The caller's standings on the incident: its reporter's organization, the agent's provider, an operator. */
const rolesOf = (caller: Caller, row: IncidentRow): NoteAuthor[] => [
  ...(row.org_id === caller.orgId ? (['reporter'] as const) : []),
  ...(row.provider_org_id === caller.orgId ? (['provider'] as const) : []),
  ...(caller.operator ? (['operator'] as const) : []),
]

const secondsBetween = (from: Date, to: Date) =>
  Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000))

export function incidentView(caller: Caller, row: IncidentRow, notes?: NoteRow[]) {
  return {
    id: row.id,
    kind: row.kind,
    state: row.state,
    severity: row.severity,
    summary: row.summary,
    impact: row.impact,
    org_id: row.org_id,
    engagement_id: row.engagement_id,
    agent_did: row.agent_did,
    provider_org_id: row.provider_org_id,
    your_roles: rolesOf(caller, row),
    resolution: row.resolution,
    resolved_at: row.resolved_at?.toISOString() ?? null,
    time_to_resolve_s: row.resolved_at ? secondsBetween(row.created_at, row.resolved_at) : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(notes
      ? {
          notes: notes.map((n) => ({
            id: n.id,
            author: n.author,
            text: n.text,
            created_at: n.created_at.toISOString(),
          })),
        }
      : {}),
  }
}

export interface NewIncident {
  severity: Severity
  summary: string
  impact: string
  engagement_id?: string | undefined
  agent_did?: string | undefined
}

const text = (field: string, value: string) => {
  const trimmed = value.trim()
  if (trimmed === '') throw rentalError('invalid_request', `body.${field} must not be blank`)
  return trimmed
}

/** What the incident is about: the client's engagement (and its agent), an agent it hired, or (operators) the platform. */
async function subjectOf(deps: IncidentDeps, caller: Caller, input: NewIncident) {
  if (input.engagement_id !== undefined) {
    const engagement = await deps.engagements.engagementOf(caller.orgId, input.engagement_id)
    if (!engagement) throw rentalError('engagement_not_found', `no engagement ${input.engagement_id}`)
    if (input.agent_did !== undefined && input.agent_did !== engagement.agent_did)
      throw rentalError('invalid_request', 'body.agent_did is not the engagement’s agent')
    return { engagementId: engagement.id, agentDid: engagement.agent_did }
  }
  if (input.agent_did !== undefined) {
    checkAgentDid(input.agent_did)
    const engagements = await deps.engagements.engagementsWith(caller.orgId, input.agent_did)
    if (engagements.length === 0)
      throw rentalError('agent_not_found', `the organization never hired the agent ${input.agent_did}`)
    return { engagementId: null, agentDid: input.agent_did }
  }
  if (!caller.operator)
    throw rentalError(
      'invalid_request',
      'body: give engagement_id or agent_did (only operators report incidents of the platform)',
    )
  return undefined
}

/**
 * Reports an incident: a client's about its engagement or an agent it hired (the agent's provider
 * organization, as the catalogue has it now, may see and note it), or an operator's about the
 * platform. `incident.reported` names incident_id, engagement_id and agent_did (insurance claims read it).
 */
export async function reportIncident(deps: IncidentDeps, caller: Caller, input: NewIncident) {
  const summary = text('summary', input.summary)
  const impact = text('impact', input.impact)
  const about = await subjectOf(deps, caller, input)
  const provider = about ? ((await deps.catalogue.agent(about.agentDid))?.provider.id ?? null) : null
  const id = `inc_${randomUUID()}`
  const now = deps.ctx.now()
  const orgId = about ? caller.orgId : null
  await inTransaction(deps.ctx.db, async (trx) => {
    await store.insertIncident(trx, {
      id,
      kind: about ? 'client' : 'platform',
      org_id: orgId,
      engagement_id: about?.engagementId ?? null,
      agent_did: about?.agentDid ?? null,
      provider_org_id: provider,
      severity: input.severity,
      summary,
      impact,
      state: 'open',
      reported_by: caller.actor.id,
      created_at: now,
      updated_at: now,
    })
    await record(deps, trx, caller, orgId, 'incident.reported', id, about, {
      kind: about ? 'client' : 'platform',
      severity: input.severity,
      summary,
      impact,
    })
  })
  return incidentView(caller, (await store.incidentById(deps.ctx.db, id))!, [])
}

/** The incident with its notes, to its reporter's organization, the agent's provider and operators (platform ones: everyone). */
export async function incidentDetail(deps: IncidentDeps, caller: Caller, id: string) {
  const row = await store.incidentById(deps.ctx.db, id)
  if (!row || (row.kind !== 'platform' && rolesOf(caller, row).length === 0)) throw notFound(id)
  return incidentView(caller, row, await store.notesOf(deps.ctx.db, id))
}

export async function incidentList(
  deps: IncidentDeps,
  caller: Caller,
  filter: { state?: IncidentState | undefined } & Page,
) {
  const { rows, total } = await store.incidentsFor(
    deps.ctx.db,
    caller.operator ? undefined : caller.orgId,
    filter,
  )
  return {
    incidents: rows.map((r) => incidentView(caller, r)),
    total,
    limit: filter.limit,
    offset: filter.offset,
  }
}

/**
 * Locks the incident the caller may act on: 404 when they may not see it; 403 when they see it
 * but may not act (a platform incident: operators only); 409 naming the state when resolved.
 */
async function lockFor(deps: IncidentDeps, trx: RentalDb, caller: Caller, id: string, move: string) {
  const row = await store.incidentById(trx, id, true)
  if (!row) throw notFound(id)
  const roles = rolesOf(caller, row)
  if (roles.length === 0) {
    if (row.kind === 'platform')
      throw rentalError('forbidden', `only the platform’s operators may ${move} a platform incident`)
    throw notFound(id)
  }
  if (row.state !== 'open')
    throw rentalError(
      'incident_state',
      `the incident is ${row.state} (at ${row.resolved_at?.toISOString()}): it cannot be ${move === 'note' ? 'noted' : 'resolved again'}`,
    )
  return { row, author: roles[0]! }
}

/** Adds a note to an open incident's timeline (its reporter's organization, the agent's provider, an operator). */
export async function noteIncident(deps: IncidentDeps, caller: Caller, id: string, note: string) {
  const body = text('text', note)
  await inTransaction(deps.ctx.db, async (trx) => {
    const { row, author } = await lockFor(deps, trx, caller, id, 'note')
    const noteId = `note_${randomUUID()}`
    const now = deps.ctx.now()
    await store.insertNote(trx, {
      id: noteId,
      incident_id: id,
      author,
      org_id: caller.orgId,
      text: body,
      created_by: caller.actor.id,
      created_at: now,
    })
    await store.touch(trx, id, now)
    await record(deps, trx, caller, row.org_id, 'incident.noted', id, aboutOf(row), {
      note_id: noteId,
      author,
      text: body,
    })
  })
  return incidentDetail(deps, caller, id)
}

/** Resolves an open incident once, with its resolution and the time it took; a second time is 409. */
export async function resolveIncident(deps: IncidentDeps, caller: Caller, id: string, resolution: string) {
  const body = text('resolution', resolution)
  await inTransaction(deps.ctx.db, async (trx) => {
    const { row, author } = await lockFor(deps, trx, caller, id, 'resolve')
    const now = deps.ctx.now()
    if (
      !(await store.resolveIncident(trx, id, {
        resolution: body,
        resolved_at: now,
        resolved_by: caller.actor.id,
      }))
    )
      throw rentalError('incident_state', 'the incident is resolved: it cannot be resolved again')
    await record(deps, trx, caller, row.org_id, 'incident.resolved', id, aboutOf(row), {
      resolution: body,
      by: author,
      severity: row.severity,
      time_to_resolve_s: secondsBetween(row.created_at, now),
    })
  })
  return incidentDetail(deps, caller, id)
}

const aboutOf = (row: IncidentRow) =>
  row.agent_did ? { engagementId: row.engagement_id, agentDid: row.agent_did } : undefined

async function record(
  deps: IncidentDeps,
  trx: RentalDb,
  caller: Caller,
  orgId: string | null,
  type: 'incident.reported' | 'incident.noted' | 'incident.resolved',
  id: string,
  about: { engagementId: string | null; agentDid: string } | undefined,
  data: Record<string, unknown>,
) {
  const subjects: Record<string, string> = { incident_id: id }
  if (about?.engagementId) subjects.engagement_id = about.engagementId
  if (about) subjects.agent_did = about.agentDid
  await deps.events.record(trx, {
    orgId,
    type,
    subjects,
    actor: caller.actor,
    data: {
      incident_id: id,
      engagement_id: about?.engagementId ?? null,
      agent_did: about?.agentDid ?? null,
      ...data,
    },
  })
}

/**
 * The open incidents as the public status shows them: the platform's with their impact; an
 * agent's with its severity and summary only (no client, no engagement).
 */
export async function publicIncidents(deps: Pick<IncidentDeps, 'ctx'>, limit = 50) {
  const rows = await store.openIncidents(deps.ctx.db, limit)
  return rows.map((r) =>
    r.kind === 'platform'
      ? {
          kind: 'platform' as const,
          severity: r.severity,
          summary: r.summary,
          impact: r.impact,
          since: r.created_at.toISOString(),
        }
      : {
          kind: 'agent' as const,
          agent_did: r.agent_did,
          severity: r.severity,
          summary: r.summary,
          since: r.created_at.toISOString(),
        },
  )
}
export type PublicIncident = Awaited<ReturnType<typeof publicIncidents>>[number]

/** An incident's response: reported_at to the first provider or operator note, or the resolution, whichever is first. */
export interface IncidentResponse {
  incident_id: string
  reported_at: Date
  /** null while nobody answered it. */
  responded_at: Date | null
  /** Seconds to the response, or (unanswered) waited so far at `now`. */
  seconds: number
  answered: boolean
}

/**
 * The response times of the client's incidents about the engagement or its agent reported since
 * `since` (at most 200, newest first), as a part of the SLA's one read (areas/sla).
 */
export function responseTimesPart(
  db: RentalDb,
  q: { orgId: string; engagementId: string; agentDid: string; since: Date; now: Date },
): QueryPart<IncidentResponse[]> {
  const at = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date))
  return {
    query: store.incidentsForResponse(db, { ...q, limit: 200 }),
    read: (rows) =>
      rows.map((r) => {
        const reported = at(r.created_at)!
        const candidates = [at(r.first_response_at), at(r.resolved_at)].filter((d): d is Date => d !== null)
        const responded = candidates.length ? new Date(Math.min(...candidates.map((d) => d.getTime()))) : null
        return {
          incident_id: r.id as string,
          reported_at: reported,
          responded_at: responded,
          seconds: secondsBetween(reported, responded ?? q.now),
          answered: responded !== null,
        }
      }),
  }
}
