import { defineArea } from '../../context.ts'
import { AUTHORIZE_PARAMETERS, type AuthorizeParameters, checkParameters } from '../authorize/index.ts'
import { parService } from './service.ts'
import { parRoutes } from './routes.ts'

/** What the authorization endpoint asks of pushed requests: their parameters, and spending a request_uri once. */
export type ParService = typeof parService

/** Pushed authorization requests (RFC 9126). */
export const parArea = defineArea({
  name: 'par',
  mount: (): ParService => parService,
  routes(app, ctx) {
    // the authorization endpoint needs this area, so the checks it shares are its plain functions, not its service
    const authorize: AuthorizeParameters = { parameters: AUTHORIZE_PARAMETERS, checkParameters }
    parRoutes(app, { db: ctx.db, kv: ctx.kv, issuer: ctx.issuer, dpop: ctx.dpop, authorize })
  },
})
