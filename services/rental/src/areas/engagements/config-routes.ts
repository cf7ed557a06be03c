import type { App } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest, type EventService } from '../events/index.ts'
import { changeConfig, ConfigChange, ConfigView, configDetail } from './config.ts'
import { expectedVersion, orgOf, Params, route, sessionOf } from '../../http/index.ts'

export function engagementConfigRoutes(app: App, ctx: RentalContext, events: EventService) {
  const tags = ['engagements']
  app.get(
    '/api/engagements/:id/config',
    {
      ...route.session('engagements:read'),
      schema: {
        summary:
          'The engagement’s config (approval policy, maximum task price, output TTL, …) and its version',
        tags,
        params: Params,
        response: { 200: ConfigView },
      },
    },
    async (request, reply) => {
      const config = await configDetail(ctx, orgOf(request), request.params.id)
      void reply.header('etag', `"${config.version}"`)
      return config
    },
  )
  app.post(
    '/api/engagements/:id/config',
    {
      ...route.csrf('engagements:write'),
      schema: {
        summary:
          'Changes some fields of the engagement’s config as a new version (If-Match: "<version>" to change only that version)',
        tags,
        params: Params,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 20 })) }),
        body: ConfigChange,
        response: { 200: ConfigView },
      },
    },
    async (request, reply) => {
      const config = await changeConfig(
        ctx,
        {
          orgId: orgOf(request),
          subject: sessionOf(request).subject,
          events,
          actor: actorOfRequest(request),
        },
        request.params.id,
        request.body,
        expectedVersion(request.headers['if-match']),
      )
      void reply.header('etag', `"${config.version}"`)
      return config
    },
  )
}
