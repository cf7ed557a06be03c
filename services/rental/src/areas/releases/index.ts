import { defineArea } from '../../context.ts'
import { releaseRoutes } from './routes.ts'

/**
 * Paying out: the releases a client still has to sign, and the release itself (an open escrow of
 * a completed task paid to the agent once, idempotent with `Idempotency-Key`). No tables: it
 * changes escrows through the engagements area, in one transaction with the rail and the receipt.
 */
export const releasesArea = defineArea({
  name: 'releases',
  needs: ['engagements', 'tasks', 'outbox', 'events', 'disputes'],
  mount: () => undefined,
  routes(app, ctx, use) {
    releaseRoutes(app, ctx, { ctx, ...use })
  },
})
