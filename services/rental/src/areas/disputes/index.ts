import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { disputeRoutes } from './routes.ts'
import { assertNotFrozen, type DisputeDeps } from './service.ts'

export interface DisputeService {
  /** 409 `escrow_frozen` naming the dispute when a live dispute covers the escrow (in the caller's transaction). */
  assertNotFrozen(trx: RentalDb, escrowId: string): Promise<void>
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
  mount: (): DisputeService => ({ assertNotFrozen }),
  routes(app, ctx, use) {
    const deps: DisputeDeps = { ctx, ...use }
    disputeRoutes(app, ctx, deps)
  },
})
