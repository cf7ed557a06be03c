import { defineArea } from '../../context.ts'
import { uiRoutes } from './routes.ts'
import { sessionsRoutes } from './sessions-routes.ts'

/** The user's pages: sign-in, home, sessions, consents, security. */
export const uiArea = defineArea({
  name: 'ui',
  needs: ['receipts', 'logout', 'sessions'],
  mount(app, ctx, { receipts, logout, sessions }) {
    uiRoutes(app, {
      rp: { db: ctx.db, kv: ctx.kv, rpId: new URL(ctx.issuer).hostname, origin: ctx.origin },
      onSessionEnd: (session) => logout.announce(session),
      db: ctx.db,
      sessions,
      receipts,
      kv: ctx.kv,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
    })
    sessionsRoutes(app, {
      db: ctx.db,
      sessions,
      origin: ctx.origin,
      onSessionEnd: (session) => logout.announce(session),
    })
    return undefined
  },
})
