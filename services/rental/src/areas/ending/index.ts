import { defineArea } from '../../context.ts'
import type { Actor } from '../events/index.ts'
import { endingRoutes } from './routes.ts'
import { endEngagement, returnAfterEnd } from './service.ts'

export interface EndingService {
  /**
   * Ends the organization's engagement as `POST /api/engagements/{id}/end` does with
   * `running: cancel` (its own transaction): running tasks canceled, escrows settled once.
   */
  endCanceling(orgId: string, engagementId: string, actor: Actor): ReturnType<typeof endEngagement>
}

/**
 * An engagement's end and export: `POST /api/engagements/{id}/end` (no new tasks, running ones
 * finished or canceled, every escrow settled once, the final figures in an `engagement.ended`
 * receipt) and `GET /api/engagements/{id}/export` (everything about it, receipts with inclusion
 * proofs, JSON or a zip, checkable offline by `npm run verify`). A task left to finish that
 * ends unpaid after the end gets its escrow returned then (its `tasks.ended` reaction, src/reactions.ts). No tables: it changes engagements, escrows and
 * tasks through their areas' services, in one transaction with the rail and the receipt.
 */
export const endingArea = defineArea({
  name: 'ending',
  needs: [
    'engagements',
    'tasks',
    'events',
    'budgets',
    'disputes',
    'outbox',
    'statements',
    'invoices',
    'refunds',
    'ratings',
    'files',
  ],
  mount(_app, ctx, use): EndingService {
    // a task of an ended engagement left to finish that fails, is canceled or rejected: its escrow goes back
    ctx.reactions.on('tasks.ended', (trx, task, actor) => returnAfterEnd({ ctx, ...use }, trx, task, actor))
    return {
      endCanceling: (orgId, id, actor) => endEngagement({ ctx, ...use }, orgId, id, 'cancel', actor, 'en'),
    }
  },
  routes(app, ctx, use) {
    endingRoutes(app, ctx, { ctx, ...use })
  },
})
