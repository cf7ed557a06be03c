import { type App, pageOf, pageQuery } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import type { WebhookDeps } from './deliver.ts'
import {
  createWebhook,
  deliveryList,
  removeWebhook,
  testWebhook,
  type WebhookActor,
  webhookList,
} from './service.ts'
import { membershipOf, orgOf, route } from '../../http/index.ts'

const Nullable = <T extends import('typebox').TSchema>(t: T) => Type.Union([t, Type.Null()])

const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  event_types: Type.Array(Type.String()),
  description: Nullable(Type.String()),
  created_at: Type.String(),
})
const CreatedWebhook = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'the signing secret (whsec_…): shown this once, never listed again' }),
})
const Attempt = Type.Object({
  attempt: Type.Integer(),
  at: Type.String(),
  status: Nullable(Type.Integer({ description: 'the receiver’s HTTP status; null when none answered' })),
  duration_ms: Type.Integer(),
  error: Nullable(Type.String()),
})
const Delivery = Type.Object({
  id: Type.String({ description: 'the webhook-id header: the same on every attempt' }),
  event_id: Type.String(),
  event_type: Type.String(),
  state: Type.Union([
    Type.Literal('pending'),
    Type.Literal('delivered'),
    Type.Literal('failed'),
    Type.Literal('canceled'),
  ]),
  attempt_count: Type.Integer(),
  attempts: Type.Array(Attempt),
  next_attempt_at: Nullable(Type.String()),
  created_at: Type.String(),
  ended_at: Nullable(Type.String()),
})
const WebhookId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })
const EventType = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^(\\*|[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+)$',
  description: 'an event type (docs/rental/webhooks.md), or "*" for all',
})

const who = (request: FastifyRequest): WebhookActor => ({
  orgId: orgOf(request),
  memberId: membershipOf(request).memberId,
  actor: actorOfRequest(request),
})

/**
 * `/api/webhooks`: `webhooks:write` creates, deletes and tests (owners, admins: a webhook sends the
 * organization's events to a URL of its choosing); `webhooks:read` lists them and their deliveries
 * (owners, admins, members, viewers).
 */
export function webhookRoutes(app: App, deps: WebhookDeps) {
  const tags = ['webhooks']
  app.post(
    '/api/webhooks',
    {
      ...route.stepUp('webhooks:write'),
      schema: {
        summary: 'Subscribes an https URL to event types; the signing secret is shown once',
        tags,
        body: Type.Object(
          {
            url: Type.String({ minLength: 1, maxLength: 2048 }),
            event_types: Type.Array(EventType, { minItems: 1, maxItems: 50 }),
            description: Type.Optional(Type.String({ maxLength: 500, pattern: '^[^\\u0000-\\u001f]*$' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedWebhook },
      },
    },
    async (request, reply) => reply.code(201).send(await createWebhook(deps, who(request), request.body)),
  )
  app.get(
    '/api/webhooks',
    {
      ...route.session('webhooks:read'),
      schema: {
        summary: 'The organization’s webhooks, newest first (never their secrets)',
        tags,
        querystring: pageQuery(),
        response: { 200: Type.Object({ webhooks: Type.Array(Webhook) }) },
      },
    },
    async (request) => webhookList(deps, orgOf(request), pageOf(request.query)),
  )
  app.delete(
    '/api/webhooks/:id',
    {
      ...route.stepUp('webhooks:write'),
      schema: {
        summary: 'Deletes a webhook: its pending deliveries stop',
        tags,
        params: WebhookId,
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) },
      },
    },
    async (request) => removeWebhook(deps, who(request), request.params.id),
  )
  app.post(
    '/api/webhooks/:id/test',
    {
      ...route.stepUp('webhooks:write'),
      schema: {
        summary: 'Sends a webhook.test event to this webhook only; answers the delivery',
        tags,
        params: WebhookId,
        response: { 200: Type.Object({ delivery_id: Type.String(), event_id: Type.String() }) },
      },
    },
    async (request) => testWebhook(deps, who(request), request.params.id),
  )
  app.get(
    '/api/webhooks/:id/deliveries',
    {
      ...route.session('webhooks:read'),
      schema: {
        summary: 'The webhook’s deliveries, newest event first, with every attempt',
        tags,
        params: WebhookId,
        querystring: pageQuery(),
        response: { 200: Type.Object({ deliveries: Type.Array(Delivery) }) },
      },
    },
    async (request) => deliveryList(deps, orgOf(request), request.params.id, pageOf(request.query)),
  )
}
