import { type App, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { rentalError } from '../../errors.ts'
import { creditClosedPeriods } from './credits.ts'
import { type SlaDeps, slaEvents, slaOf } from './service.ts'
import { Body, Id, Nullable, orgOf, Params, route, sessionOf } from '../../http/index.ts'

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
  incident_ids: Type.Optional(
    Type.Array(Type.String(), { description: 'incident response: the incidents answered late' }),
  ),
})
const Credit = Type.Object(
  {
    id: Type.String(),
    breach_event_id: Type.String({ description: 'the sla.breached event credited (evt_<n>)' }),
    term: Term,
    period: Type.Object({ from: Type.String(), to: Type.String() }),
    fees_fils: Type.Integer({ description: 'the engagement’s fees in the period (escrows released)' }),
    credit_bps: Type.Integer(),
    owed_fils: Type.Integer({ description: 'credit_bps of the fees, rounded half up' }),
    amount_fils: Type.Integer({ description: 'what was posted: owed, capped at the period’s fees' }),
    currency: Type.String(),
    transfer_id: Nullable(Type.String({ description: 'the rail transfer (none for 0)' })),
    receipt_leaf_hash: Type.String({ description: 'the sla.credited receipt' }),
    event_id: Type.String({ description: 'the sla.credited event' }),
    created_at: Type.String(),
  },
  { description: 'a breach’s credit, posted on the rail after its period ended' },
)
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
  status: Type.Union([Type.Literal('met'), Type.Literal('breached'), Type.Literal('no_data')]),
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
  credit: Nullable(Credit),
})

/** The engagement's SLA with its measurements, and the organization's breaches and restorations. */
export function slaRoutes(app: App, ctx: RentalContext, deps: SlaDeps) {
  const tags = ['sla']
  app.get(
    '/api/engagements/:id/sla',
    {
      ...route.session('engagements:read'),
      schema: {
        summary:
          'The signed SLA (body, hash, signatures), its terms, and each term measured now from the engagement’s tasks and receipts',
        tags,
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
            credits: Type.Object({
              count: Type.Integer(),
              total_fils: Type.Integer(),
              items: Type.Array(Credit),
            }),
          }),
        },
      },
    },
    async (request) => slaOf(deps, orgOf(request), request.params.id),
  )
  app.get(
    '/api/sla/events',
    {
      ...route.session('engagements:read'),
      schema: {
        summary: 'The organization’s SLA breaches and restorations, newest first',
        tags,
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
  app.post(
    '/api/sla/credits/run',
    {
      // operators only, whatever their role (as GET /api/admin/operators): no role permission
      ...route.csrf(),
      schema: {
        summary:
          'Operators: runs the credit job now (every ended period’s uncredited breaches credited once)',
        description:
          'The job also runs on every instance every RENTAL_SLA_CREDIT_CHECK_MS; running it again, or at once on several instances, credits each breach once.',
        tags,
        body: Type.Optional(Type.Object({}, { additionalProperties: false })),
        response: { 200: Type.Object({ credited: Type.Integer() }) },
      },
    },
    async (request) => {
      if (!deps.orgs.isOperator(sessionOf(request)))
        throw rentalError('forbidden', 'only the platform’s operators may run the SLA credit job')
      return creditClosedPeriods(deps)
    },
  )
}
