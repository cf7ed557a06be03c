import { type App, type rateLimit } from '@svc/kit'
import { Type } from 'typebox'
import { requireAdmin } from '../../admin.ts'
import type { IdpDb } from '../../db.ts'
import { NoContent } from '../../responses.ts'
import { NewResource, Resource, ResourceId } from './schemas.ts'
import { present, protectedResourceMetadata, registerResource } from './service.ts'
import { allResources, deleteResource, resourceById } from './store.ts'
import { idpError } from '../../errors.ts'

export function resourceRoutes(
  app: App,
  {
    db,
    issuer,
    adminToken,
    discoveryLimit,
  }: { db: IdpDb; issuer: string; adminToken: string; discoveryLimit: ReturnType<typeof rateLimit> },
) {
  const admin = {
    onRequest: async (request: Parameters<typeof requireAdmin>[0]) => requireAdmin(request, adminToken),
  }
  const tags = ['management']
  const notFound = () => idpError('not_found', 'no such resource')

  app.post(
    '/manage/v1/resources',
    {
      ...admin,
      schema: {
        summary: 'Register a protected resource (RFC 8707 target)',
        tags,
        body: NewResource,
        response: { 201: Resource },
      },
    },
    async (request, reply) => reply.code(201).send(await registerResource(db, request.body)),
  )
  app.get(
    '/manage/v1/resources',
    {
      ...admin,
      schema: {
        summary: 'All registered resources',
        tags,
        response: { 200: Type.Object({ resources: Type.Array(Resource) }) },
      },
    },
    async () => ({ resources: (await allResources(db)).map(present) }),
  )
  app.delete(
    '/manage/v1/resources/:id',
    {
      ...admin,
      schema: {
        summary: 'Remove a resource: tokens are no longer issued for it',
        tags,
        params: ResourceId,
        response: NoContent,
      },
    },
    async (request, reply) => {
      if (!(await deleteResource(db, request.params.id))) throw notFound()
      return reply.code(204).send(null)
    },
  )
  app.get(
    '/.well-known/oauth-protected-resource/:id',
    {
      preHandler: discoveryLimit,
      schema: {
        summary: 'RFC 9728 protected-resource metadata of a registered resource',
        tags: ['discovery'],
        params: ResourceId,
      },
    },
    async (request, reply) => {
      const resource = await resourceById(db, request.params.id)
      if (!resource) throw notFound()
      return reply
        .header('cache-control', 'public, max-age=300')
        .send(protectedResourceMetadata(resource, issuer))
    },
  )
}
