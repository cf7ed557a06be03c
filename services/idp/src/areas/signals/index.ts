import { defineArea } from '../../context.ts'
import { signalRoutes } from './routes.ts'
import { type SignalDeps, startSignalDelivery } from './service.ts'

export { emit, type SignalDeps } from './service.ts'

/** Shared Signals (SSF) streams: security events pushed or polled by clients. */
export const signalsArea = defineArea({
  name: 'signals',
  needs: ['keys'],
  async mount(app, ctx, { keys }) {
    const signals: SignalDeps = {
      db: ctx.db,
      jobs: ctx.jobs,
      keys,
      issuer: ctx.issuer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      retryDelayS: ctx.config.lifecycleRetryDelayS,
      allowPrivate: ctx.config.fetchAllowPrivate,
    }
    await startSignalDelivery(signals)
    signalRoutes(app, { ...signals, kv: ctx.kv })
    return signals
  },
})
