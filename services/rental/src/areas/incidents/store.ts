import type { Insertable, Selectable } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The incidents area's tables (migration 0031). */
export interface IncidentTables {
  incidents: {
    id: string
    kind: 'client' | 'platform'
    org_id: string | null
    engagement_id: string | null
    agent_did: string | null
    provider_org_id: string | null
    severity: Severity
    summary: string
    impact: string
    state: IncidentState
    resolution: string | null
    resolved_at: Date | null
    resolved_by: string | null
    reported_by: string | null
    created_at: Date
    updated_at: Date
  }
  incident_notes: {
    id: string
    incident_id: string
    author: NoteAuthor
    org_id: string | null
    text: string
    created_by: string | null
    created_at: Date
  }
}

export type Severity = 'sev1' | 'sev2' | 'sev3' | 'sev4'
export type IncidentState = 'open' | 'resolved'
export type NoteAuthor = 'reporter' | 'provider' | 'operator'
export type IncidentRow = Selectable<IncidentTables['incidents']>
export type NoteRow = Selectable<IncidentTables['incident_notes']>

export const insertIncident = (trx: RentalDb, row: Insertable<IncidentTables['incidents']>) =>
  trx.insertInto('incidents').values(row).execute()

export const incidentById = (db: RentalDb, id: string, lock = false) => {
  const query = db.selectFrom('incidents').selectAll().where('id', '=', id)
  return (lock ? query.forUpdate() : query).executeTakeFirst()
}

export const insertNote = (trx: RentalDb, row: Insertable<IncidentTables['incident_notes']>) =>
  trx.insertInto('incident_notes').values(row).execute()

export const notesOf = (db: RentalDb, incidentId: string) =>
  db
    .selectFrom('incident_notes')
    .selectAll()
    .where('incident_id', '=', incidentId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

/** Moves an open incident to resolved: false when it was not open (the row is locked too). */
export async function resolveIncident(
  trx: RentalDb,
  id: string,
  change: { resolution: string; resolved_at: Date; resolved_by: string | null },
) {
  const result = await trx
    .updateTable('incidents')
    .set({ ...change, state: 'resolved', updated_at: change.resolved_at })
    .where('id', '=', id)
    .where('state', '=', 'open')
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export const touch = (trx: RentalDb, id: string, at: Date) =>
  trx.updateTable('incidents').set({ updated_at: at }).where('id', '=', id).execute()

/**
 * The incidents an organization sees (`orgId`: those it reported, those about agents it provides,
 * the platform's), or every one (`orgId` undefined: an operator); newest first, with their count.
 */
export async function incidentsFor(
  db: RentalDb,
  orgId: string | undefined,
  filter: { state?: IncidentState | undefined; limit: number; offset: number },
) {
  let base = db.selectFrom('incidents')
  if (orgId !== undefined)
    base = base.where((eb) =>
      eb.or([eb('org_id', '=', orgId), eb('provider_org_id', '=', orgId), eb('kind', '=', 'platform')]),
    )
  if (filter.state) base = base.where('state', '=', filter.state)
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** The open incidents, newest first (the public status). */
export const openIncidents = (db: RentalDb, limit: number) =>
  db
    .selectFrom('incidents')
    .select(['id', 'kind', 'agent_did', 'severity', 'summary', 'impact', 'created_at', 'updated_at'])
    .where('state', '=', 'open')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()

/** Authors whose note answers an incident (the reporter's own notes do not). */
const RESPONDERS: NoteAuthor[] = ['provider', 'operator']

/**
 * The client's incidents about the engagement, or about its agent without naming an engagement,
 * reported in [since, …), newest first, with their first provider or operator note.
 */
export const incidentsForResponse = (
  db: RentalDb,
  q: { orgId: string; engagementId: string; agentDid: string; since: Date; limit: number },
) =>
  db
    .selectFrom('incidents')
    .select((eb) => [
      'incidents.id',
      'incidents.created_at',
      'incidents.resolved_at',
      eb
        .selectFrom('incident_notes')
        .select((n) => n.fn.min<Date | string | null>('incident_notes.created_at').as('first'))
        .whereRef('incident_notes.incident_id', '=', 'incidents.id')
        .where('incident_notes.author', 'in', RESPONDERS)
        .as('first_response_at'),
    ])
    .where('incidents.org_id', '=', q.orgId)
    .where((eb) =>
      eb.or([
        eb('incidents.engagement_id', '=', q.engagementId),
        eb.and([eb('incidents.engagement_id', 'is', null), eb('incidents.agent_did', '=', q.agentDid)]),
      ]),
    )
    .where('incidents.created_at', '>=', q.since)
    .orderBy('incidents.created_at', 'desc')
    .orderBy('incidents.id', 'desc')
    .limit(q.limit)

/** Open client incidents no provider or operator has answered yet: what they are about. */
export const unanswered = (db: RentalDb, limit: number) =>
  db
    .selectFrom('incidents')
    .select(['org_id', 'engagement_id', 'agent_did'])
    .where('state', '=', 'open')
    .where('kind', '=', 'client')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('incident_notes')
            .select('incident_notes.id')
            .whereRef('incident_notes.incident_id', '=', 'incidents.id')
            .where('incident_notes.author', 'in', RESPONDERS),
        ),
      ),
    )
    .orderBy('created_at')
    .limit(limit)
    .execute()

/**
 * Erasure: what the organization wrote replaced by `[erased]`: the summary and impact of the
 * incidents it reported, and its notes on any incident (as reporter or as a provider). A
 * resolution is the resolver's, and stays.
 */
export async function eraseOrg(trx: RentalDb, orgId: string) {
  const incidents = await trx
    .updateTable('incidents')
    .set({ summary: '[erased]', impact: '[erased]' })
    .where('kind', '=', 'client')
    .where('org_id', '=', orgId)
    .executeTakeFirst()
  const notes = await trx
    .updateTable('incident_notes')
    .set({ text: '[erased]' })
    .where('org_id', '=', orgId)
    .executeTakeFirst()
  return { incidents: Number(incidents.numUpdatedRows), notes: Number(notes.numUpdatedRows) }
}
