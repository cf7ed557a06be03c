import { defineArea } from '../../context.ts'
import { trialRoutes } from './routes.ts'

/**
 * Trials of market listings: a few free tasks within a window (no escrow, no charge), run as
 * tasks with a `trial_id` through the tasks area's one dispatch and counted atomically against
 * the trial; converted once into the pending engagement hiring makes. Table: trials.
 */
export const trialsArea = defineArea({
  name: 'trials',
  needs: ['market', 'tasks', 'engagements', 'events'],
  mount: () => undefined,
  routes(app, ctx, use) {
    trialRoutes(app, ctx.sessions, { ctx, ...use })
  },
})
