import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { requireWriter, writerOf } from '../../auth.ts'
import type { LedgerConfig } from '../../config.ts'
import type { LedgerDb } from '../../db.ts'
import { createWebhook, EVENT, listWebhooks, type Outbound, removeWebhook } from './service.ts'

const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  created_at: Type.String(),
})

export function webhookRoutes(
  app: App,
  db: LedgerDb,
  config: LedgerConfig,
  webhookKey: string,
  outbound: Outbound,
) {
  const security = [{ writer: [] }]
  app.post(
    '/v1/webhooks',
    {
      onRequest: requireWriter(config),
      schema: {
        summary: `Subscribe to ${EVENT}; the signing secret is shown once`,
        tags: ['webhooks'],
        security,
        body: Type.Object(
          {
            url: Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2000 }),
            events: Type.Array(Type.Literal(EVENT), { minItems: 1, maxItems: 1 }),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ ...Webhook.properties, secret: Type.String() }) },
      },
    },
    async (request, reply) => {
      const subscriber = writerOf(request, config)
      const created = await createWebhook(
        db,
        webhookKey,
        subscriber,
        request.body.url,
        request.body.events,
        outbound,
      )
      return reply.code(201).send(created)
    },
  )
  app.get(
    '/v1/webhooks',
    {
      onRequest: requireWriter(config),
      schema: {
        summary: "The caller's webhooks",
        tags: ['webhooks'],
        security,
        response: { 200: Type.Object({ webhooks: Type.Array(Webhook) }) },
      },
    },
    async (request) => ({ webhooks: await listWebhooks(db, writerOf(request, config)) }),
  )
  app.delete(
    '/v1/webhooks/:id',
    {
      onRequest: requireWriter(config),
      schema: {
        summary: 'Delete one of the caller’s webhooks (another subscriber’s answers 404)',
        tags: ['webhooks'],
        security,
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        response: { 200: Type.Object({ deleted: Type.Literal(true) }) },
      },
    },
    async (request) => {
      await removeWebhook(db, writerOf(request, config), request.params.id)
      return { deleted: true as const }
    },
  )
}
