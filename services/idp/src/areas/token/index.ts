import { defineArea } from '../../context.ts'
import { tokenRoutes } from './routes.ts'
import { revokeClientFamilies } from './store.ts'

export { DEVICE_CODE } from './device-code.ts'
export { TOKEN_EXCHANGE } from './exchange.ts'
export { PRE_AUTHORIZED_CODE } from './pre-authorized-code.ts'
export { tokenService } from './service.ts'

/** Who a user access token stands for while it stands (userinfo, approvals, introspection). */
export { tokenHolder, userOfToken } from './holder.ts'

/** The token endpoint: each grant type's steps in ./routes.ts. */
export const tokenArea = defineArea({
  name: 'token',
  needs: ['orgs', 'keys'],
  mount(app, ctx, { orgs, keys }) {
    // a withdrawn consent ends the client's refresh families, in the same transaction
    ctx.reactions.on('consent.withdrawn', (trx, { userId, clientId }) =>
      revokeClientFamilies(trx, userId, clientId),
    )
    tokenRoutes(app, {
      dpop: ctx.dpop,
      screening: orgs.screening,
      db: ctx.db,
      kv: ctx.kv,
      keys,
      issuer: ctx.issuer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      ratePerMinute: ctx.config.tokenRatePerMinute,
      now: ctx.config.now,
    })
    return undefined
  },
})
