import { defineArea } from '../../context.ts'
import { lifecycleAdminRoutes } from './routes.ts'
import { announce, clientsKnowing, type LifecycleDeps, startLifecycleDelivery } from './service.ts'

export type { LifecycleDeps } from './service.ts'

/** What the lifecycle offers: its deps, the clients that know a user, and `announce` bound to its deps. */
export interface Lifecycle extends LifecycleDeps {
  /** Tells the clients that know the user (or only `onlyClient`) of an account event, in `trx`. */
  announce(
    trx: Parameters<typeof announce>[1],
    userId: string,
    event: Parameters<typeof announce>[3],
    data?: Record<string, unknown>,
    onlyClient?: string,
  ): Promise<void>
  /** The live clients that know the user: the ones told of its account events. */
  clientsKnowing(db: Parameters<typeof clientsKnowing>[1], userId: string): ReturnType<typeof clientsKnowing>
}

/** Lifecycle webhooks to clients (consent granted or withdrawn, account deleted). */
export const lifecycleArea = defineArea({
  name: 'lifecycle',
  needs: ['clients'],
  async mount(app, ctx, { clients }): Promise<Lifecycle> {
    const lifecycle: LifecycleDeps = {
      db: ctx.db,
      jobs: ctx.jobs,
      sealer: ctx.sealer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      retryDelayS: ctx.config.lifecycleRetryDelayS,
      allowPrivate: ctx.config.fetchAllowPrivate,
      clients,
      reactions: ctx.reactions,
    }
    await startLifecycleDelivery(lifecycle)
    lifecycleAdminRoutes(app, ctx.db, ctx.config.adminToken)
    return {
      ...lifecycle,
      announce: (trx, userId, event, data, onlyClient) =>
        announce(lifecycle, trx, userId, event, data, onlyClient),
      clientsKnowing: (db, userId) => clientsKnowing(lifecycle, db, userId),
    }
  },
})
