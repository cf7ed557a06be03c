import { defineArea } from '../../context.ts'
import { userinfoRoutes } from './routes.ts'

/** The UserInfo endpoint (OpenID Connect Core §5.3). */
export const userinfoArea = defineArea({
  name: 'userinfo',
  needs: ['keys', 'token'],
  mount: () => undefined,
  routes(app, ctx, { keys, token }) {
    userinfoRoutes(app, { db: ctx.db, kv: ctx.kv, keys, issuer: ctx.issuer, dpop: ctx.dpop, tokens: token })
  },
})
