import { defineArea } from '../../context.ts'
import { consentRoutes } from './consent-routes.ts'
import { authorizeRoutes } from './routes.ts'

/** The authorization endpoint and the consent page. */
export const authorizeArea = defineArea({
  name: 'authorize',
  needs: ['receipts', 'lifecycle'],
  mount(app, ctx, { receipts, lifecycle }) {
    authorizeRoutes(app, ctx.db, ctx.issuer)
    consentRoutes(app, {
      db: ctx.db,
      receipts,
      lifecycle,
      issuer: ctx.issuer,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
    })
    return undefined
  },
})
