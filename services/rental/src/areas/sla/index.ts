import { defineArea } from '../../context.ts'
import { breachByEventId, breachCount, creditsByTransfers, type SlaCreditRow } from './store.ts'
import { slaRoutes } from './routes.ts'
import { startCreditJob } from './credits.ts'
import { CONSUMER, slaConsumer } from './service.ts'

/** How often the log's `sla` consumer runs at most (a breach is recorded up to this much later). */
const SLA_EVERY_MS = 1000

export interface SlaService {
  /** The SLA credits posted by these rail transfers, by transfer id (a statement's credit lines). */
  creditsByTransfers(transferIds: string[]): Promise<Map<string, SlaCreditRow>>
  /** The organization's breach of the engagement by its sla.breached event id, with its credit once made (insurance claims). */
  breachOf(orgId: string, engagementId: string, eventId: string): ReturnType<typeof breachByEventId>
  /** How many breaches were recorded about these engagements (insurance pricing). */
  breachCount(engagementIds: string[]): Promise<number>
}

/**
 * The SLA's measurable terms (in the SLA body signed at hire), measured from the engagement's
 * tasks and their receipts; the log's `sla` consumer re-measures an engagement as its tasks end
 * and records each breach and restoration once (sla.breached / sla.restored); incidents about it
 * re-measure its incident response. Each instance's credit job credits the breaches of ended
 * statement periods on the rail, once (sla.credited). Tables: sla_states, sla_events, sla_credits.
 */
export const slaArea = defineArea({
  name: 'sla',
  needs: ['engagements', 'events', 'tasks', 'incidents', 'orgs'],
  mount(app, ctx, use): SlaService {
    // once a second at most: a busy engagement is measured once for a second's tasks, not per task
    use.events.consume(CONSUMER, slaConsumer({ ctx, ...use }), { everyMs: SLA_EVERY_MS })
    const job = startCreditJob({ ctx, ...use })
    app.addHook('preClose', async () => job.stop())
    return {
      breachOf: (orgId, engagementId, eventId) => breachByEventId(ctx.db, orgId, engagementId, eventId),
      breachCount: (ids) => breachCount(ctx.db, ids),
      creditsByTransfers: async (ids) =>
        new Map((await creditsByTransfers(ctx.db, ids)).map((c) => [c.transfer_id!, c])),
    }
  },
  routes(app, ctx, use) {
    slaRoutes(app, ctx, { ctx, ...use })
  },
})
