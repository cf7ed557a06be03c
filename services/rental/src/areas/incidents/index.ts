import { defineArea } from '../../context.ts'
import { incidentRoutes } from './routes.ts'
import type { RentalDb } from '../../db.ts'
import {
  incidentList,
  type IncidentResponse,
  type PublicIncident,
  publicIncidents,
  responseTimesPart,
} from './service.ts'
import type { Page } from '@svc/kit'
import { SYSTEM } from '../events/index.ts'
import { eraseOrg, unanswered } from './store.ts'

export type { IncidentResponse, PublicIncident }

export interface IncidentService {
  /** The organization's incidents, a page of them, as GET /api/incidents lists them to a member (the tenant export). */
  list(orgId: string, page: Page): ReturnType<typeof incidentList>
  /** Erasure: the texts the organization wrote (its incidents' summary and impact, its notes) wiped in `trx`; how many. */
  eraseOrg(trx: RentalDb, orgId: string): ReturnType<typeof eraseOrg>
  /** The open incidents as the public status shows them (no client named), newest first. */
  openPublic(limit?: number): Promise<PublicIncident[]>
  /**
   * Response times (reported → first provider/operator note or resolution) of the client's
   * incidents about the engagement or its agent reported since `since`, as a part of the SLA's one read.
   */
  responseTimesPart: typeof responseTimesPart
  /** Open client incidents nobody answered yet (at most `limit`): their organization, engagement and agent. */
  unanswered(
    db: RentalDb,
    limit: number,
  ): Promise<Array<{ org_id: string | null; engagement_id: string | null; agent_did: string | null }>>
}

/**
 * Incidents: reported by a client about its engagement or an agent it hired, or by an operator
 * about the platform; a timeline of notes (reporter, the agent's provider, operators); resolved
 * once with the time to resolve. Open ones show on /status. Tables: incidents, incident_notes.
 */
export const incidentsArea = defineArea({
  name: 'incidents',
  needs: ['engagements', 'catalogue', 'events', 'orgs'],
  mount: (_app, ctx, use): IncidentService => ({
    list: (orgId, page) => incidentList({ ctx, ...use }, { orgId, operator: false, actor: SYSTEM }, page),
    openPublic: (limit) => publicIncidents({ ctx }, limit),
    eraseOrg,
    responseTimesPart,
    unanswered,
  }),
  routes(app, ctx, use) {
    incidentRoutes(
      app,
      { ctx, engagements: use.engagements, catalogue: use.catalogue, events: use.events },
      use.orgs,
    )
  },
})
