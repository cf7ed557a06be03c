import { type App, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { SESSION_SECURITY } from '../auth/hooks.ts'
import { Body, Id, Nullable, Params } from '../engagements/schemas.ts'
import { can, orgOf } from '../orgs/permissions.ts'
import { type SlaDeps, slaEvents, slaOf } from './service.ts'

const Term = Type.Union([
  Type.Literal('latency_p95'),
  Type.Literal('success_rate'),
  Type.Literal('availability'),
  Type.Literal('incident_response'),
])
const EventType = Type.Union([Type.Literal('sla.breached'), Type.Literal('sla.restored')])
const DateTime = Type.String({ format: 'date-time', maxLength: 40 })
const Evidence = Type.Object({
  task_ids: Type.Array(Type.String()),
  receipt_leaf_hashes: Type.Array(Type.String()),
})
const Window = Type.Object({
  tasks: Type.Optional(Type.Integer()),
  days: Type.Optional(Type.Integer()),
  observed: Type.Integer(),
})
const Unit = Type.Union([Type.Literal('ms'), Type.Literal('bps'), Type.Literal('s')])
const Rule = Type.Union([Type.Literal('at_most'), Type.Literal('at_least')])

const Measurement = Type.Object({
  term: Term,
  unit: Unit,
  rule: Rule,
  target: Type.Number(),
  measured: Nullable(Type.Number()),
  window: Window,
  status: Type.Union([
    Type.Literal('met'),
    Type.Literal('breached'),
    Type.Literal('no_data'),
    Type.Literal('not_measured'),
  ]),
  evidence: Evidence,
  breached_since: Nullable(Type.String()),
})

const SlaEvent = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  type: EventType,
  engagement_id: Type.String(),
  term: Term,
  measured: Nullable(Type.Number()),
  target: Type.Number(),
  unit: Unit,
  rule: Rule,
  window: Window,
  evidence: Evidence,
  created_at: Type.String(),
})

/** The engagement's SLA with its measurements, and the organization's breaches and restorations. */
export function slaRoutes(app: App, ctx: RentalContext, deps: SlaDeps) {
  const { sessions } = ctx
  const tags = ['sla']
  app.get(
    '/api/engagements/:id/sla',
    {
      ...sessions.session,
      ...can('engagements:read'),
      schema: {
        summary:
          'The signed SLA (body, hash, signatures), its terms, and each term measured now from the engagement’s tasks and receipts',
        tags,
        security: SESSION_SECURITY,
        params: Params,
        response: {
          200: Type.Object({
            engagement_id: Type.String(),
            sla: Type.Object({
              body: Body,
              hash: Type.String(),
              signatures: Type.Array(Type.Object({ signer: Type.String(), signature: Type.String() })),
              signed: Type.Boolean(),
            }),
            service_levels: Body,
            defaulted: Type.Boolean({
              description: 'true: the SLA was signed before it carried terms; the defaults apply',
            }),
            measured_at: Type.String(),
            measurements: Type.Array(Measurement),
          }),
        },
      },
    },
    async (request) => slaOf(deps, orgOf(request), request.params.id),
  )
  app.get(
    '/api/sla/events',
    {
      ...sessions.session,
      ...can('engagements:read'),
      schema: {
        summary: 'The organization’s SLA breaches and restorations, newest first',
        tags,
        security: SESSION_SECURITY,
        querystring: Type.Object(
          {
            ...pageQuery().properties,
            engagement_id: Type.Optional(Id),
            type: Type.Optional(EventType),
            from: Type.Optional(DateTime),
            to: Type.Optional(DateTime),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            events: Type.Array(SlaEvent),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => slaEvents(deps, orgOf(request), request.query, pageOf(request.query)),
  )
}
