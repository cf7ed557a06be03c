import { defineArea } from '../../context.ts'
import { consentRoutes } from './consent-routes.ts'
import { authorizeRoutes } from './routes.ts'
import { AUTHORIZE_PARAMETERS, checkParameters } from './service.ts'

export { describeScope } from './consent-routes.ts'
export { decideConsent } from './consent-service.ts'
export { consentsOf } from './consent-store.ts'
export { AUTHORIZE_PARAMETERS, authorizeService, checkParameters, checkScope } from './service.ts'

/** What the authorization endpoint shares with pushed requests (areas/par): its parameters and their checks. */
export interface AuthorizeService {
  parameters: typeof AUTHORIZE_PARAMETERS
  checkParameters: typeof checkParameters
}

/** The authorization endpoint and the consent page. */
export const authorizeArea = defineArea({
  name: 'authorize',
  needs: ['receipts', 'lifecycle'],
  mount(app, ctx, { receipts, lifecycle }): AuthorizeService {
    authorizeRoutes(app, ctx.db, ctx.issuer)
    consentRoutes(app, {
      db: ctx.db,
      receipts,
      lifecycle,
      reactions: ctx.reactions,
      issuer: ctx.issuer,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
    })
    return { parameters: AUTHORIZE_PARAMETERS, checkParameters }
  },
})
