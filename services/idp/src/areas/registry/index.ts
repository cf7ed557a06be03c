import { defineArea } from '../../context.ts'
import { registryRoutes } from './routes.ts'

/** The public agent registry. */
export const registryArea = defineArea({
  name: 'registry',
  needs: ['orgs', 'documents'],
  mount(app, ctx, { orgs, documents }) {
    registryRoutes(app, {
      db: ctx.db,
      issuer: ctx.issuer,
      screening: orgs.screening,
      documents,
      kv: ctx.kv,
      ratePerMinute: ctx.config.registryRatePerMinute,
    })
    return undefined
  },
})
