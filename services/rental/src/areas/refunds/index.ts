import { defineArea } from '../../context.ts'
import { refundRoutes } from './routes.ts'

/**
 * Refunds of released escrows: asked for by the client, accepted by the agent's provider
 * organization or an operator (possibly for less), approved by an operator, which settles them on
 * the rail once (a reversal transfer, key `refund:<id>`) with a `refund.settled` receipt.
 * Tables: refunds.
 */
export const refundsArea = defineArea({
  name: 'refunds',
  needs: ['engagements', 'events', 'orgs', 'catalogue'],
  mount: () => undefined,
  routes(app, ctx, use) {
    refundRoutes(app, ctx, { ctx, ...use })
  },
})
