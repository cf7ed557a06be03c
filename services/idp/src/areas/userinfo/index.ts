import { defineArea } from '../../context.ts'
import { userinfoRoutes } from './routes.ts'

/** The UserInfo endpoint (OpenID Connect Core §5.3). */
export const userinfoArea = defineArea({
  name: 'userinfo',
  needs: ['keys'],
  mount(app, ctx, { keys }) {
    userinfoRoutes(app, { db: ctx.db, kv: ctx.kv, keys, issuer: ctx.issuer, dpop: ctx.dpop })
    return undefined
  },
})
