import { defineArea } from '../../context.ts'
import { consentRoutes } from './consent-routes.ts'
import { authorizeRoutes } from './routes.ts'
import { AUTHORIZE_PARAMETERS, authorizeService, checkParameters } from './service.ts'

export { describeScope } from './consent-routes.ts'
export { decideConsent } from './consent-service.ts'
export { consentsOf } from './consent-store.ts'
export { AUTHORIZE_PARAMETERS, checkParameters, checkScope } from './service.ts'

/** What the authorization endpoint offers: its codes, consents and the clients a user or session signed in to. */
export type AuthorizeService = typeof authorizeService

/** The authorization request's parameters and their checks, which pushed requests (areas/par) share. */
export interface AuthorizeParameters {
  parameters: typeof AUTHORIZE_PARAMETERS
  checkParameters: typeof checkParameters
}

/** The authorization endpoint and the consent page. */
export const authorizeArea = defineArea({
  name: 'authorize',
  needs: ['receipts', 'lifecycle', 'accounts', 'clients', 'passkeys', 'par'],
  mount(_app, ctx): AuthorizeService {
    // the clients the user consented to or got a code at know the user (the lifecycle tells them)
    ctx.reactions.on('user.clients', async (trx, known) => {
      for (const id of await authorizeService.clientIdsOfUser(trx, known.userId)) known.clientIds.add(id)
    })
    return authorizeService
  },
  routes(app, ctx, { receipts, lifecycle, accounts, clients, passkeys, par }) {
    authorizeRoutes(app, { db: ctx.db, issuer: ctx.issuer, clients, passkeys, par })
    consentRoutes(app, {
      db: ctx.db,
      receipts,
      accounts,
      par,
      lifecycle,
      reactions: ctx.reactions,
      issuer: ctx.issuer,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
    })
  },
})
