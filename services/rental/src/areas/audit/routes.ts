import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { rentalError } from '../../errors.ts'
import type { EventService } from '../events/index.ts'
import { orgOf, route } from '../../http/index.ts'

const Nullable = <T extends import('typebox').TSchema>(t: T) => Type.Union([t, Type.Null()])

const Event = Type.Object({
  id: Type.String({ description: 'evt_<seq>' }),
  seq: Type.Integer(),
  type: Type.String({ description: 'task.created, request.answered, … (docs/rental/webhooks.md)' }),
  stream: Nullable(Type.String()),
  stream_seq: Nullable(Type.Integer()),
  subjects: Type.Record(Type.String(), Type.String()),
  actor: Type.Object({
    type: Type.String({ description: 'user, token, schedule, batch, operator, agent, system' }),
    id: Nullable(Type.String()),
    ip: Nullable(Type.String()),
    request_id: Nullable(Type.String()),
  }),
  data: Type.Unknown(),
  created_at: Type.String(),
})

const AuditQuery = Type.Object(
  {
    before: Type.Optional(
      Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'events before this seq' }),
    ),
    type: Type.Optional(
      Type.String({
        pattern: '^[a-z][a-z0-9_]{0,49}(\\.[a-z][a-z0-9_]{0,49}){1,3}$',
        description: 'one event type',
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  { additionalProperties: false },
)

/** `GET /api/audit`: the organization's record (every event, requests and changes), newest first. */
export function auditRoutes(app: App, events: EventService) {
  app.get(
    '/api/audit',
    {
      ...route.session('audit:read'),
      schema: {
        summary:
          'The organization’s audit record: its events (changes and the S+C and A2A calls that asked for them), newest first',
        tags: ['audit'],
        querystring: AuditQuery,
        response: {
          200: Type.Object({
            events: Type.Array(Event),
            next_before: Nullable(
              Type.Integer({ description: 'the `before` of the next page, null at the end' }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const { before, type, limit } = request.query
      // Ajv skips range checks of a value the querystring coercion made Infinity (before=1e309)
      for (const [name, value] of [
        ['before', before],
        ['limit', limit],
      ] as const)
        if (value !== undefined && !Number.isSafeInteger(value))
          throw rentalError('invalid_request', `querystring.${name} must be a finite integer`)
      const page = await events.ofOrg(orgOf(request), {
        ...(type ? { types: [type] } : {}),
        ...(before !== undefined ? { beforeSeq: before } : {}),
        limit,
      })
      return {
        events: page.map(({ org_id: _org, ...event }) => event),
        next_before: page.length === limit ? page[page.length - 1]!.seq : null,
      }
    },
  )
}
