import { defineArea } from '../../context.ts'
import { localiseErrors } from './error-locale.ts'
import { publicRoutes } from './routes.ts'
import { dependencyProbe } from './status.ts'

export { CATALOGUES, type Lang } from './i18n.ts'

/**
 * The public pages (landing, market, status), the console's message catalogues, and every error
 * answer in the caller's language (error-locale.ts). No tables.
 */
export const publicArea = defineArea({
  name: 'public',
  needs: ['catalogue', 'auth', 'market', 'incidents'],
  mount(app) {
    localiseErrors(app)
    return undefined
  },
  routes(app, ctx, use) {
    publicRoutes(app, {
      catalogue: use.catalogue,
      market: use.market,
      incidents: use.incidents,
      version: ctx.version,
      urls: { rental: ctx.baseUrl, idp: ctx.topology.idp.url, ledger: ctx.topology.ledger.url },
      idpLinked: () => use.auth.signInAvailable(),
      signedIn: async (request) => (await ctx.sessions.find(request)) !== null,
      dependencies: dependencyProbe({
        idp: ctx.topology.idp.url,
        ledger: ctx.topology.ledger.url,
        agents: ctx.topology.agents.url,
      }),
    })
  },
})
