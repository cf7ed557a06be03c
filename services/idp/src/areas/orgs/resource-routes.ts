import { type App } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import { NewResource, Resource, ResourceId } from '../resources/index.ts'
import { present, registerResource } from '../resources/index.ts'
import type { ResourcesService } from '../resources/index.ts'
import { orgKey, orgOf } from './auth.ts'
import { NoContent } from '../../responses.ts'
import { idpError } from '../../errors.ts'

/** An organization's protected resources: registered, listed and removed by it alone (another's is 404). */
export function orgResourceRoutes(app: App, { db, resources }: { db: IdpDb; resources: ResourcesService }) {
  const tags = ['organizations']
  const security = [{ organizationKey: [] }]
  const authed = orgKey(db)

  app.post(
    '/orgs/resources',
    {
      ...authed,
      schema: {
        summary: 'Register a protected resource of the organization; its RFC 9728 metadata is served',
        tags,
        security,
        body: NewResource,
        response: { 201: Resource },
      },
    },
    async (request, reply) => {
      const org = orgOf(request)
      return reply.code(201).send(await registerResource(db, request.body, org.id))
    },
  )
  app.get(
    '/orgs/resources',
    {
      ...authed,
      schema: {
        summary: 'The organization’s resources',
        tags,
        security,
        response: { 200: Type.Object({ resources: Type.Array(Resource) }) },
      },
    },
    async (request) => {
      const org = orgOf(request)
      return { resources: (await resources.all(db, org.id)).map(present) }
    },
  )
  app.delete(
    '/orgs/resources/:id',
    {
      ...authed,
      schema: {
        summary: 'Remove a resource: tokens are no longer issued for it',
        tags,
        security,
        params: ResourceId,
        response: NoContent,
      },
    },
    async (request, reply) => {
      const org = orgOf(request)
      if (!(await resources.delete(db, request.params.id, org.id)))
        throw idpError('not_found', 'no such resource in this organization')
      return reply.code(204).send(null)
    },
  )
}
