import { defineArea } from '../../context.ts'
import { revocationRoutes } from './routes.ts'

/** Token revocation (RFC 7009) and introspection (RFC 7662). */
export const revocationArea = defineArea({
  name: 'revocation',
  needs: ['keys', 'token', 'resources'],
  mount: () => undefined,
  routes(app, ctx, { keys, token, resources }) {
    revocationRoutes(app, { db: ctx.db, kv: ctx.kv, keys, issuer: ctx.issuer, tokens: token, resources })
  },
})
