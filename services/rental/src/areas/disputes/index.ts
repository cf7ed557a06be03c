import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { disputeRoutes } from './routes.ts'
import { assertNotFrozen, frozenBy } from './freeze.ts'
import { type DisputeDeps, disputeList, disputeView } from './service.ts'
import type { Page } from '@svc/kit'
import { SYSTEM } from '../events/index.ts'
import { disputesOfEngagement, eraseReasonsOf, liveDisputesOf } from './store.ts'

export interface DisputeService {
  /** The organization's disputes (as the client or as the agents' provider), a page, as GET /api/disputes lists them. */
  list(orgId: string, page: Page): ReturnType<typeof disputeList>
  /** Erasure: the reasons of the organization's disputes wiped in `trx`; how many. */
  eraseReasonsOf(trx: RentalDb, orgId: string): Promise<number>
  /** 409 `escrow_frozen` naming the dispute when a live dispute covers the escrow (in the caller's transaction). */
  assertNotFrozen(trx: RentalDb, escrowId: string): Promise<void>
  /** The organization's live (open or responded) disputes' ids, read in `db` (erasure refuses while any). */
  liveOf(db: RentalDb, orgId: string): Promise<string[]>
  /** The live dispute that freezes the escrow, or undefined (in the caller's transaction). */
  frozenBy(trx: RentalDb, escrowId: string): ReturnType<typeof frozenBy>
  /** The organization's disputes about its engagement, oldest first, as `GET /api/disputes/{id}` shows them (the export). */
  ofEngagement(orgId: string, engagementId: string): Promise<Array<ReturnType<typeof disputeView>>>
}

/**
 * Disputes: a client challenges money held or paid for a task or an engagement (the escrows in
 * question frozen while it is open), the agent's provider answers, an operator resolves it once
 * (refunds through the refunds area, held escrows settled here) with a `dispute.resolved` receipt
 * whose resolution body the provider identity signs. Tables: disputes, dispute_escrows.
 */
export const disputesArea = defineArea({
  name: 'disputes',
  needs: ['engagements', 'events', 'orgs', 'catalogue', 'tasks', 'invoices', 'budgets'],
  mount: (_app, ctx, use): DisputeService => ({
    list: (orgId, page) =>
      disputeList({ ctx, ...use }, { orgId, operator: false, actor: SYSTEM }, page, 'en'),
    assertNotFrozen,
    liveOf: liveDisputesOf,
    eraseReasonsOf,
    frozenBy,
    ofEngagement: async (orgId, engagementId) =>
      (await disputesOfEngagement(ctx.db, orgId, engagementId)).map((d) => disputeView(d.row, d.escrowIds)),
  }),
  routes(app, ctx, use) {
    const deps: DisputeDeps = { ctx, ...use }
    disputeRoutes(app, ctx, deps)
  },
})
