import { defineArea } from '../../context.ts'
import { webConsoleRoutes } from './routes.ts'

/**
 * The web console for people: one page under `/console` and its browser code (Preact + htm as ES
 * modules, no build step). Everything it shows comes from the `/api` routes with the session
 * cookie and the CSRF header; the client's signing key lives in the browser only. No tables.
 */
export const webConsoleArea = defineArea({
  name: 'webconsole',
  needs: [],
  mount: () => undefined,
  routes(app, ctx) {
    webConsoleRoutes(app, ctx.sessions)
  },
})
