import { defineArea } from '../../context.ts'
import { registryRoutes } from './routes.ts'

/** The public agent registry. */
export const registryArea = defineArea({
  name: 'registry',
  needs: ['orgs', 'documents', 'clients'],
  mount(app, ctx, { orgs, documents, clients }) {
    registryRoutes(app, {
      db: ctx.db,
      issuer: ctx.issuer,
      orgs,
      clients,
      documents,
      kv: ctx.kv,
      ratePerMinute: ctx.config.registryRatePerMinute,
    })
    return undefined
  },
})
