import { defineArea } from '../../context.ts'
import { refundRoutes } from './routes.ts'
import { refundList, refundView, type RefundView } from './service.ts'
import type { Page } from '@svc/kit'
import * as store from './store.ts'

export { refundedOf, settleDisputeRefund } from './dispute-refund.ts'
export { feePartOf } from './settle.ts'

/** A settled refund as statements trace it: its reversal transfer, receipt and credit note. */
export interface SettledRefund {
  refund_id: string
  escrow_id: string
  engagement_id: string
  task_id: string | null
  receipt_leaf_hash: string | null
  refund_hash: string | null
  credit_note: { id: string; number: string } | null
}

export interface RefundService {
  /** The organization's refunds, a page of them, as GET /api/refunds lists them (the tenant export). */
  list(orgId: string, page: Page): ReturnType<typeof refundList>
  /** The settled refunds whose reversal transfers these are, by transfer id. */
  settledByTransfers(transferIds: string[]): Promise<Map<string, SettledRefund>>
  /** The organization's refunds of its engagement's escrows, oldest first (the export). */
  ofEngagement(orgId: string, engagementId: string): Promise<RefundView[]>
}

/**
 * Refunds of released escrows: asked for by the client, accepted by the agent's provider
 * organization or an operator (possibly for less), approved by an operator, which settles them
 * once: the `svc.refund` body signed by the provider key, a reversal transfer (key
 * `refund:<id>`), a credit note (invoices), the budgets' spend released, a `refund.settled` receipt.
 * Tables: refunds.
 */
export const refundsArea = defineArea({
  name: 'refunds',
  needs: ['engagements', 'events', 'orgs', 'catalogue', 'invoices', 'budgets', 'disputes'],
  mount: (_app, ctx, use): RefundService => ({
    list: (orgId, page) => refundList({ ctx, ...use }, orgId, page, 'en'),
    ofEngagement: async (orgId, engagementId) =>
      (await store.refundsOfEngagement(ctx.db, orgId, engagementId)).map((r) => refundView(r)),
    async settledByTransfers(transferIds) {
      const rows = await store.settledByTransfers(ctx.db, transferIds)
      return new Map(
        rows.map((r) => [
          r.transfer_id!,
          {
            refund_id: r.id,
            escrow_id: r.escrow_id,
            engagement_id: r.engagement_id,
            task_id: r.task_id,
            receipt_leaf_hash: r.receipt_leaf_hash,
            refund_hash: r.body_hash,
            credit_note:
              r.credit_note_id && r.credit_note_number
                ? { id: r.credit_note_id, number: r.credit_note_number }
                : null,
          },
        ]),
      )
    },
  }),
  routes(app, ctx, use) {
    refundRoutes(app, ctx, { ctx, ...use })
  },
})
