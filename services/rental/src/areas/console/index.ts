import { defineArea } from '../../context.ts'
import { consoleRoutes } from './routes.ts'

/** `GET /api/me`: who is signed in, in which organization and role, the session's CSRF token, where the ledger is. No tables. */
export const consoleArea = defineArea({
  name: 'console',
  needs: ['orgs'],
  mount: () => undefined,
  routes(app, ctx, use) {
    consoleRoutes(app, ctx.sessions, ctx.topology.ledger.url, use.orgs)
  },
})
