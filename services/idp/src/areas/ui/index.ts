import { defineArea } from '../../context.ts'
import { uiRoutes } from './routes.ts'
import { sessionsRoutes } from './sessions-routes.ts'

/** The user's pages: sign-in, home, sessions, consents, security. */
export const uiArea = defineArea({
  name: 'ui',
  needs: ['receipts', 'logout', 'sessions', 'authorize', 'clients', 'activity', 'account-changes'],
  mount: () => undefined,
  routes(app, ctx, use) {
    const { receipts, logout, sessions, authorize, clients, activity } = use
    uiRoutes(app, {
      rp: { db: ctx.db, kv: ctx.kv, rpId: new URL(ctx.issuer).hostname, origin: ctx.origin },
      onSessionEnd: (session) => logout.announce(session),
      db: ctx.db,
      sessions,
      authorize,
      clients,
      activity,
      accountChanges: use['account-changes'],
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
  },
})
