import { defineArea } from '../../context.ts'
import { witnessRoutes } from './routes.ts'
import { witnessOf } from './service.ts'

/** The C2SP witness: cosigns the ledgers' checkpoints it is configured for. */
export const witnessArea = defineArea({
  name: 'witness',
  needs: ['identity', 'documents'],
  async mount(app, ctx, { identity, documents }) {
    await witnessRoutes(
      app,
      {
        db: ctx.db,
        witness: witnessOf(ctx.issuer, identity.witnessSeed),
        logs: ctx.config.witnessLogs,
        ...(ctx.config.witnessPinOnFirstUse ? { pinFrom: ctx.ledger.url } : {}),
      },
      documents,
    )
    return undefined
  },
})
