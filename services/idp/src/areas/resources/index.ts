import { defineArea } from '../../context.ts'
import { resourceRoutes } from './routes.ts'

export { NewResource, Resource, ResourceId } from './schemas.ts'
export { present, registerResource, resourcesService, targetResource } from './service.ts'

/** Protected resources (RFC 8707 indicators, RFC 9728 metadata) and their scopes. */
export const resourcesArea = defineArea({
  name: 'resources',
  mount(app, ctx) {
    resourceRoutes(app, {
      db: ctx.db,
      issuer: ctx.issuer,
      adminToken: ctx.config.adminToken,
      discoveryLimit: ctx.discoveryLimit,
    })
    return undefined
  },
})
