import { defineArea } from '../../context.ts'
import { activityRoutes } from './routes.ts'
import { activityOf } from './service.ts'

export { activitySection } from './pages.ts'

/** What the account page and the evidence ask of the activity: the user's latest relayed receipts. */
export interface ActivityService {
  of(userId: string): ReturnType<typeof activityOf>
}

/** Receipts about a user that other services send back, shown on the user's activity page. */
export const activityArea = defineArea({
  name: 'activity',
  needs: ['accounts', 'clients'],
  async mount(app, ctx, { accounts, clients }): Promise<ActivityService> {
    const activity = {
      db: ctx.db,
      sealer: ctx.sealer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      accounts,
      clients,
    }
    await activityRoutes(app, activity)
    return { of: (userId) => activityOf(activity, userId) }
  },
})
