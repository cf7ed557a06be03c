import { defineArea } from '../../context.ts'
import { keyRoutes } from './routes.ts'

/** The log's public key (signed-note form, JWK, did:key). No tables. */
export const keyArea = defineArea({
  name: 'key',
  mount: () => undefined,
  routes(app, ctx) {
    keyRoutes(app, ctx.config.origin, ctx.keys.verifierKey)
  },
})
