import { defineArea } from '../../context.ts'
import { resourcesService } from './service.ts'
import { resourceRoutes } from './routes.ts'

export { NewResource, Resource, ResourceId } from './schemas.ts'
export { present, registerResource, targetResource } from './service.ts'

/** What other areas ask of protected resources: one by identifier, all (or an organization's), deleting one. */
export type ResourcesService = typeof resourcesService

/** Protected resources (RFC 8707 indicators, RFC 9728 metadata) and their scopes. */
export const resourcesArea = defineArea({
  name: 'resources',
  mount: (): ResourcesService => resourcesService,
  routes(app, ctx) {
    resourceRoutes(app, {
      db: ctx.db,
      issuer: ctx.issuer,
      adminToken: ctx.config.adminToken,
      discoveryLimit: ctx.discoveryLimit,
    })
  },
})
