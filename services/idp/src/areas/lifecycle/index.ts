import { defineArea } from '../../context.ts'
import { lifecycleAdminRoutes } from './routes.ts'
import { type LifecycleDeps, startLifecycleDelivery } from './service.ts'

/** Lifecycle webhooks to clients (consent granted or withdrawn, account deleted). */
export const lifecycleArea = defineArea({
  name: 'lifecycle',
  async mount(app, ctx) {
    const lifecycle: LifecycleDeps = {
      db: ctx.db,
      jobs: ctx.jobs,
      sealer: ctx.sealer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      retryDelayS: ctx.config.lifecycleRetryDelayS,
      allowPrivate: ctx.config.fetchAllowPrivate,
    }
    await startLifecycleDelivery(lifecycle)
    lifecycleAdminRoutes(app, ctx.db, ctx.config.adminToken)
    return lifecycle
  },
})
