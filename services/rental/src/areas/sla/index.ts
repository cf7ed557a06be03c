import { defineArea } from '../../context.ts'
import { slaRoutes } from './routes.ts'
import { CONSUMER, slaConsumer } from './service.ts'

/**
 * The SLA's measurable terms (in the SLA body signed at hire), measured from the engagement's
 * tasks and their receipts; the log's `sla` consumer re-measures an engagement as its tasks end
 * and records each breach and restoration once (sla.breached / sla.restored).
 * Tables: sla_states, sla_events.
 */
export const slaArea = defineArea({
  name: 'sla',
  needs: ['engagements', 'events', 'tasks', 'outbox'],
  mount(_app, ctx, use) {
    use.events.consume(CONSUMER, slaConsumer({ ctx, ...use }))
    return undefined
  },
  routes(app, ctx, use) {
    slaRoutes(app, ctx, { ctx, ...use })
  },
})
