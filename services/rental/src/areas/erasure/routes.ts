import type { App } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest } from '../events/index.ts'
import { type ErasureDeps, eraseClient } from './service.ts'
import { orgOf, route, sessionOf } from '../../http/index.ts'

const Count = Type.Integer({ minimum: 0 })
const ErasureAnswer = Type.Object({
  org_id: Type.String(),
  state: Type.Literal('erased'),
  erased_at: Type.String({ format: 'date-time' }),
  engagements_ended: Type.Array(
    Type.Object({ engagement_id: Type.String(), returned_fils: Count, receipt_id: Type.String() }),
  ),
  deleted: Type.Object({
    members: Count,
    sessions: Count,
    api_tokens: Count,
    webhooks: Count,
    // absent from an answer kept before migration 0050
    exports: Type.Optional(Count),
    files: Count,
    file_bytes: Count,
    task_texts: Count,
    rating_comments: Count,
    references: Count,
    incident_texts: Count,
    incident_notes: Count,
    dispute_reasons: Count,
    events_pseudonymised: Count,
  }),
  kept: Type.Array(Type.String()),
  receipt: Type.Object({ id: Type.String(), leaf_hash: Type.String() }),
})

export function erasureRoutes(app: App, ctx: RentalContext, deps: ErasureDeps) {
  app.post(
    '/api/clients/erase',
    {
      ...route.stepUp('clients:erase'),
      schema: {
        summary:
          'Erases the client: personal data deleted, money records and receipts kept under a pseudonym (owner, after step-up)',
        description:
          'Refused (409 erasure_refused) under a legal hold, with live disputes or escrows of completed tasks still to release, all named. Active engagements end first (open escrows back to the wallet). A data.erased receipt. The same session calling again gets the first answer; signing in again starts a new organization.',
        tags: ['orgs'],
        body: Type.Object(
          {
            confirm: Type.String({
              minLength: 1,
              maxLength: 100,
              description: 'the organization’s id, typed again: erasure cannot be undone',
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: ErasureAnswer },
      },
    },
    async (request) =>
      eraseClient(
        deps,
        { orgId: orgOf(request), sessionHash: sessionOf(request).idHash, actor: actorOfRequest(request) },
        request.body.confirm,
      ),
  )
}
