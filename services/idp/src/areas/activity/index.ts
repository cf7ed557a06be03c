import { defineArea } from '../../context.ts'
import { activityRoutes } from './routes.ts'

export { activitySection } from './pages.ts'
export { activityOf } from './service.ts'

/** Receipts about a user that other services send back, shown on the user's activity page. */
export const activityArea = defineArea({
  name: 'activity',
  async mount(app, ctx) {
    await activityRoutes(app, { db: ctx.db, sealer: ctx.sealer, pairwiseSalt: ctx.config.pairwiseSalt })
    return undefined
  },
})
