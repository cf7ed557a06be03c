import { defineArea } from '../../context.ts'
import { tokenRoutes } from './routes.ts'

/** Who a user access token stands for while it stands (userinfo, approvals, introspection). */
export { tokenHolder, userOfToken } from './holder.ts'

/** The token endpoint: each grant type's steps in ./routes.ts. */
export const tokenArea = defineArea({
  name: 'token',
  needs: ['orgs', 'keys'],
  mount(app, ctx, { orgs, keys }) {
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
