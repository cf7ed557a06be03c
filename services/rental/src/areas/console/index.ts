import { defineArea } from '../../context.ts'
import { consoleRoutes } from './routes.ts'

/** `GET /api/me`: who is signed in, the session's CSRF token, where the ledger is. No tables. */
export const consoleArea = defineArea({
  name: 'console',
  mount: () => undefined,
  routes(app, ctx) {
    consoleRoutes(app, ctx.sessions, ctx.topology.ledger.url)
  },
})
