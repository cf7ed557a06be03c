import { defineArea } from '../../context.ts'
import { searchRoutes } from './routes.ts'

/** Receipts by subject or issuer, for writers. No tables. */
export const searchArea = defineArea({
  name: 'search',
  mount: () => undefined,
  routes(app, ctx) {
    searchRoutes(app, ctx.db, ctx.config)
  },
})
