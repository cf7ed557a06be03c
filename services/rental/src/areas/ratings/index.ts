import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import * as store from './store.ts'
import { ratingsRoutes } from './routes.ts'
import { agentReferences, engagementRatings, type RatingDeps, ratingSummary } from './service.ts'

export interface RatingService {
  /** Erasure: the organization's rating comments wiped, its references deleted, in `trx`; how many. */
  eraseOrg(trx: RentalDb, orgId: string): ReturnType<typeof store.eraseOrg>
  /** The agent's rating count, mean and distribution (the AgentCV's). */
  summary(agentDid: string): ReturnType<typeof ratingSummary>
  /** The agent's latest references as every client reads them (the AgentCV's). */
  references(agentDid: string, limit: number): ReturnType<typeof agentReferences>
  /** The organization's ratings of its engagement's tasks and its reference of it (the export). */
  ofEngagement(orgId: string, engagementId: string): ReturnType<typeof engagementRatings>
}

/**
 * Ratings of completed tasks (bound to their `task.completed` receipt, editable within
 * RENTAL_RATING_EDIT_WINDOW_S) and clients' references of their engagements (named with consent).
 * Tables: task_ratings, engagement_references.
 */
export const ratingsArea = defineArea({
  name: 'ratings',
  needs: ['engagements', 'tasks', 'outbox', 'events', 'orgs'],
  mount(_app, ctx, use): RatingService {
    const deps: RatingDeps = { ctx, ...use }
    return {
      summary: (did) => ratingSummary(deps, did),
      eraseOrg: store.eraseOrg,
      references: (did, limit) => agentReferences(deps, did, { limit, offset: 0 }),
      ofEngagement: (orgId, engagementId) => engagementRatings(deps, orgId, engagementId),
    }
  },
  routes(app, ctx, use) {
    ratingsRoutes(app, { ctx, ...use })
  },
})
