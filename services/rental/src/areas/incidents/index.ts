import { defineArea } from '../../context.ts'
import { incidentRoutes } from './routes.ts'
import { type PublicIncident, publicIncidents } from './service.ts'

export type { PublicIncident }

export interface IncidentService {
  /** The open incidents as the public status shows them (no client named), newest first. */
  openPublic(limit?: number): Promise<PublicIncident[]>
}

/**
 * Incidents: reported by a client about its engagement or an agent it hired, or by an operator
 * about the platform; a timeline of notes (reporter, the agent's provider, operators); resolved
 * once with the time to resolve. Open ones show on /status. Tables: incidents, incident_notes.
 */
export const incidentsArea = defineArea({
  name: 'incidents',
  needs: ['engagements', 'catalogue', 'events', 'orgs'],
  mount: (_app, ctx): IncidentService => ({
    openPublic: (limit) => publicIncidents({ ctx }, limit),
  }),
  routes(app, ctx, use) {
    incidentRoutes(
      app,
      { ctx, engagements: use.engagements, catalogue: use.catalogue, events: use.events },
      use.orgs,
    )
  },
})
