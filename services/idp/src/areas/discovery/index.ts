import { defineArea } from '../../context.ts'
import { discoveryRoutes } from './routes.ts'

/** OpenID Connect discovery and OAuth authorization server metadata. */
export const discoveryArea = defineArea({
  name: 'discovery',
  mount: () => undefined,
  routes(app, ctx) {
    discoveryRoutes(app, ctx.issuer, ctx.discoveryLimit)
  },
})
