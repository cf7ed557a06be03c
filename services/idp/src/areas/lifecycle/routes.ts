import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { requireAdmin } from '../../admin.ts'
import type { IdpDb } from '../../db.ts'
import { recentDeliveries } from './store.ts'

/** The admin sees lifecycle deliveries and how each one went. */
export function lifecycleAdminRoutes(app: App, db: IdpDb, adminToken: string) {
  app.get(
    '/manage/v1/lifecycle-deliveries',
    {
      onRequest: async (request) => requireAdmin(request, adminToken),
      schema: {
        summary: 'Recent lifecycle webhook deliveries, newest first, with their attempts and outcome',
        tags: ['management'],
        querystring: Type.Object({
          client_id: Type.Optional(Type.String({ maxLength: 100 })),
          limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
        }),
      },
    },
    async (request) => ({
      deliveries: (await recentDeliveries(db, request.query.client_id, request.query.limit)).map((d) => ({
        id: d.id,
        client_id: d.client_id,
        event: d.event,
        status: d.status,
        attempts: d.attempts,
        last_status: d.last_status,
        last_error: d.last_error,
        created_at: d.created_at.toISOString(),
        delivered_at: d.delivered_at?.toISOString() ?? null,
        body: JSON.parse(d.body) as unknown,
      })),
    }),
  )
}
