import { defineArea } from '../../context.ts'
import { endingRoutes } from './routes.ts'

/**
 * An engagement's end and export: `POST /api/engagements/{id}/end` (no new tasks, running ones
 * finished or canceled, every escrow settled once, the final figures in an `engagement.ended`
 * receipt) and `GET /api/engagements/{id}/export` (everything about it, receipts with inclusion
 * proofs, checkable offline by `npm run verify`). No tables: it changes engagements, escrows and
 * tasks through their areas' services, in one transaction with the rail and the receipt.
 */
export const endingArea = defineArea({
  name: 'ending',
  needs: ['engagements', 'tasks', 'events', 'budgets', 'disputes', 'outbox'],
  mount: () => undefined,
  routes(app, ctx, use) {
    endingRoutes(app, ctx, { ctx, ...use })
  },
})
