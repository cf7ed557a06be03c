import { type App } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import { NewResource, Resource, ResourceId } from '../resources/schemas.ts'
import { present, registerResource } from '../resources/service.ts'
import { allResources, deleteResource } from '../resources/store.ts'
import { requireOrg } from './service.ts'
import { idpError } from '../../errors.ts'

/** An organization's protected resources: registered, listed and removed by it alone (another's is 404). */
export function orgResourceRoutes(app: App, db: IdpDb) {
  const tags = ['organizations']
  const security = [{ organizationKey: [] }]

  app.post(
    '/orgs/resources',
    {
      schema: {
        summary: 'Register a protected resource of the organization; its RFC 9728 metadata is served',
        tags,
        security,
        body: NewResource,
        response: { 201: Resource },
      },
    },
    async (request, reply) => {
      const org = await requireOrg(db, request)
      return reply.code(201).send(await registerResource(db, request.body, org.id))
    },
  )
  app.get(
    '/orgs/resources',
    {
      schema: {
        summary: 'The organization’s resources',
        tags,
        security,
        response: { 200: Type.Object({ resources: Type.Array(Resource) }) },
      },
    },
    async (request) => {
      const org = await requireOrg(db, request)
      return { resources: (await allResources(db, org.id)).map(present) }
    },
  )
  app.delete(
    '/orgs/resources/:id',
    {
      schema: {
        summary: 'Remove a resource: tokens are no longer issued for it',
        tags,
        security,
        params: ResourceId,
      },
    },
    async (request, reply) => {
      const org = await requireOrg(db, request)
      if (!(await deleteResource(db, request.params.id, org.id)))
        throw idpError('not_found', 'no such resource in this organization')
      return reply.code(204).send()
    },
  )
}
