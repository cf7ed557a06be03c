import { defineArea } from '../../context.ts'
import { engagementRoutes } from './routes.ts'
import type { EngagementConfig } from './config.ts'
import { engagementConfigRoutes } from './config-routes.ts'
import { engagementCapacityRoutes } from './capacity-routes.ts'
import { engagementVersionRoutes } from './version-routes.ts'
import * as end from './end-store.ts'
import { type EngagementRecords, engagementRecords } from './records.ts'
import { type EscrowService, escrowService } from './escrows.ts'
import { type EngagementTerms, engagementTerms } from './terms.ts'
import { type MessageParts, messageParts } from './message-parts.ts'
import { type RevocationRecords, revocationRecords } from './revocations.ts'
import * as store from './store.ts'
import type { EngagementRow, EscrowRow } from './store.ts'

export type { EngagementConfig, EngagementRow, EscrowRow }
export type { EscrowBody, ReleaseBody, ServiceLevels, SlaBody, SlaTeam, SlaTrial } from './bodies.ts'
export { bodyHash, DEFAULT_SERVICE_LEVELS, feeOf, newId, signedBy } from './bodies.ts'
export { checkAgentDid, engagementEvent, engagementNotFound, escrowView, walletOf } from './service.ts'
export type { EngagementRecords, EngagementTerms, EscrowService, RevocationRecords }
export type { EscrowKey } from './escrow-store.ts'
export { hasMessagePart, type MessageParts } from './message-parts.ts'

/** An end's writes (areas/ending), in its transaction: escrows locked, the engagement ended, an escrow returned. */
export interface EndingWrites {
  end: typeof end
}

/**
 * What other areas may ask of engagements, escrows and revocations (a `trx` keeps it in the
 * caller's transaction): the area's smaller services in one object, each method delegating.
 */
export type EngagementService = EngagementRecords &
  EscrowService &
  EngagementTerms &
  RevocationRecords &
  EndingWrites &
  MessageParts

/**
 * Hiring: engagements with their signed SLA and offer package, the escrows that pay for tasks
 * (opened on the rail when signed), and clients' revocations of agents.
 * Tables: engagements, escrows, agent_revocations, engagement_config_versions, agent_versions,
 * engagement_addenda (capacity and agent versions: capacity.ts, versions.ts).
 */
export const engagementsArea = defineArea({
  name: 'engagements',
  needs: ['catalogue', 'events', 'budgets', 'market', 'orgs', 'onboarding'],
  mount(_app, ctx, use): EngagementService {
    // budgets cannot need engagements (a cycle): they ask whether an engagement is the organization's
    ctx.reactions.on(
      'budgets.engagement',
      async (orgId, id) => (await store.engagementOf(ctx.db, orgId, id)) !== undefined,
    )
    return {
      ...engagementRecords(ctx, use),
      ...escrowService(ctx, use.budgets),
      ...engagementTerms(ctx),
      ...revocationRecords(ctx),
      end,
      ...messageParts,
    }
  },
  routes(app, ctx, use) {
    engagementRoutes(app, ctx, use.catalogue, use.events, use.budgets, use.market, use.onboarding)
    engagementConfigRoutes(app, ctx, use.events)
    engagementCapacityRoutes(app, ctx, use.events, use.market)
    engagementVersionRoutes(app, ctx, use.events, use.catalogue, use.orgs)
  },
})
