import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { type ActivityDeps, ingest } from './service.ts'

/**
 * POST /webhooks/svc/{client_id}: the exact bytes are signed, so the body is taken raw, whatever
 * its content type (or none), and parsed only after its signature is checked (a re-serialised
 * body no longer verifies).
 */
export async function activityRoutes(app: App, deps: ActivityDeps) {
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers()
    raw.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 256 * 1024 }, (_req, body, done) =>
      done(null, body),
    )
    raw.post(
      '/webhooks/svc/:client_id',
      {
        schema: {
          summary:
            'A client relays a ledger receipt.recorded event about one of its users (X-Svc-Signature over the raw body)',
          tags: ['activity'],
          params: Type.Object({ client_id: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: {
            202: Type.Object({
              status: Type.Union([
                Type.Literal('accepted'),
                Type.Literal('duplicate'),
                Type.Literal('ignored'),
              ]),
            }),
          },
        },
      },
      async (request, reply) => {
        const signature = request.headers['x-svc-signature']
        const status = await ingest(
          deps,
          (request.params as { client_id: string }).client_id,
          Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          typeof signature === 'string' ? signature : undefined,
        )
        return reply.code(202).send({ status })
      },
    )
  })
}
