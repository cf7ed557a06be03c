import type { App } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { actorOfRequest, tokenActor } from '../events/index.ts'
import type { TenantAuth } from '../tenant/auth.ts'
import {
  ARCHIVE_DAYS,
  type ExportDeps,
  exportArchive,
  exportList,
  exportStatus,
  startExport,
} from './service.ts'
import { membershipOf, orgOf } from '../../http/index.ts'

const tags = ['tenant']
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()])

const Export = Type.Object({
  id: Type.String(),
  state: Type.Union([
    Type.Literal('queued'),
    Type.Literal('running'),
    Type.Literal('ready'),
    Type.Literal('failed'),
    Type.Literal('expired'),
  ]),
  progress: Type.Object({
    done: Type.Integer({ description: 'sections gathered' }),
    total: Type.Integer({ description: 'sections in all' }),
    section: Nullable(Type.String({ description: 'the section being gathered now' })),
    percent: Type.Integer(),
  }),
  error: Nullable(Type.String()),
  archive: Type.Union([
    Type.Object({
      download_url: Type.String(),
      bytes: Type.Integer(),
      sha256: Type.String({ description: 'SHA-256 of the zip, hex' }),
      format: Type.String(),
    }),
    Type.Null(),
  ]),
  requested_by: Type.String(),
  created_at: Type.String(),
  completed_at: Nullable(Type.String()),
  expires_at: Nullable(
    Type.String({ description: `the archive is kept ${ARCHIVE_DAYS} days after it is ready` }),
  ),
})
const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

const actorOf = (request: FastifyRequest) =>
  request.orgKey ? tokenActor(request.orgKey.id, request) : actorOfRequest(request)

/** The server-side tenant export: started, followed, downloaded (owners and admins: `exports:write`). */
export function exportRoutes(app: App, deps: ExportDeps, auth: TenantAuth) {
  app.post(
    '/v1/tenant/exports',
    {
      ...auth.write('exports:write'),
      schema: {
        summary: `Starts an export of all the organization’s data into one zip archive, gathered by a durable job (one at a time; 409 while one runs); kept sealed ${ARCHIVE_DAYS} days`,
        tags,
        response: { 202: Export },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await startExport(deps, membershipOf(request), actorOf(request))),
  )
  app.get(
    '/v1/tenant/exports',
    {
      ...auth.read('exports:write'),
      schema: {
        summary: 'The organization’s latest exports (20), newest first',
        tags,
        response: { 200: Type.Object({ exports: Type.Array(Export) }) },
      },
    },
    async (request) => exportList(deps, orgOf(request)),
  )
  app.get(
    '/v1/tenant/exports/:id',
    {
      ...auth.read('exports:write'),
      schema: {
        summary: 'An export’s state and progress (sections done of total); another organization’s is 404',
        tags,
        params: Id,
        response: { 200: Export },
      },
    },
    async (request) => exportStatus(deps, orgOf(request), request.params.id),
  )
  app.get(
    '/v1/tenant/exports/:id/download',
    {
      ...auth.read('exports:write'),
      schema: {
        summary:
          'The export’s zip archive: manifest.json and one JSON file per section (409 while not ready, 410 once expired)',
        tags,
        params: Id,
      },
    },
    async (request, reply) => {
      const { bytes, file } = await exportArchive(deps, orgOf(request), request.params.id, actorOf(request))
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${file}"`)
        .header('cache-control', 'no-store')
        .send(bytes)
    },
  )
}
