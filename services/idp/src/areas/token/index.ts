import type { FastifyRequest } from 'fastify'
import { defineArea } from '../../context.ts'
import type { PresentedTokenDeps } from '../../oauth/presented-token.ts'
import { tokenHolder, userOfToken } from './holder.ts'
import { tokenRoutes } from './routes.ts'
import { tokenService } from './service.ts'
import { revokeClientFamilies } from './store.ts'

/**
 * What other areas ask of tokens: refresh families by user, client or hash, and their revocation;
 * who a user access token stands for while it stands (userinfo, approvals, introspection).
 */
export type TokenService = typeof tokenService & {
  /** The account and client behind a verified user access token's claims, while it stands. */
  holder(payload: Record<string, unknown>): ReturnType<typeof tokenHolder>
  /** The user behind the request's access token; refusals answer 401 with a challenge. */
  userOf(deps: PresentedTokenDeps, request: FastifyRequest): ReturnType<typeof userOfToken>
}

export { DEVICE_CODE } from './device-code.ts'
export { TOKEN_EXCHANGE } from './exchange.ts'
export { PRE_AUTHORIZED_CODE } from './pre-authorized-code.ts'

/** The token endpoint: each grant type's steps in ./routes.ts. */
export const tokenArea = defineArea({
  name: 'token',
  needs: [
    'orgs',
    'keys',
    'accounts',
    'authorize',
    'clients',
    'credentials',
    'device',
    'resources',
    'sessions',
    'tasks',
  ],
  mount(_app, ctx, use): TokenService {
    // a withdrawn consent ends the client's refresh families, in the same transaction
    ctx.reactions.on('consent.withdrawn', (trx, { userId, clientId }) =>
      revokeClientFamilies(trx, userId, clientId),
    )
    // the clients that hold or held a refresh family of the user know it (the lifecycle tells them)
    ctx.reactions.on('user.clients', async (trx, known) => {
      for (const id of await tokenService.clientIdsOfUser(trx, known.userId)) known.clientIds.add(id)
    })
    const holderDeps = { ...use, db: ctx.db }
    const holder = (payload: Record<string, unknown>) => tokenHolder(holderDeps, payload)
    return {
      ...tokenService,
      holder,
      userOf: (deps, request) => userOfToken(deps, holder, request),
    }
  },
  routes(app, ctx, use) {
    tokenRoutes(app, {
      ...use,
      dpop: ctx.dpop,
      screening: use.orgs.screening,
      db: ctx.db,
      kv: ctx.kv,
      issuer: ctx.issuer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      ratePerMinute: ctx.config.tokenRatePerMinute,
      now: ctx.config.now,
    })
  },
})
