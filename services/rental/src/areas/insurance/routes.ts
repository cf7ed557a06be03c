import { type App, Fils, IdempotencyKeyHeader, LangQuery, Money, moneyLocaleOf } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import { fundReserve, operatorFunds } from './funds.ts'
import { PRICING, quote } from './quote.ts'
import { buyPolicy, fileClaim, type InsuranceDeps, policyOf } from './service.ts'
import { Id, idempotent, Nullable, orgOf, Params, route, sessionOf } from '../../http/index.ts'

const Covered = Type.Union([
  Type.Literal('failed_task'),
  Type.Literal('sla_breach'),
  Type.Literal('incident'),
])
const Quotable = Type.Union([Type.Literal('failed_task'), Type.Literal('sla_breach')])
const Funds = Type.Object({ pool: Money, reserve: Money, exposure: Money, available: Money, fees: Money })
const Quote = Type.Object({
  id: Type.String(),
  engagement_id: Type.String(),
  state: Type.Union([Type.Literal('offered'), Type.Literal('bought')]),
  coverage: Money,
  premium: Money,
  covers: Type.Array(Quotable),
  period_days: Type.Integer(),
  expires_at: Type.String(),
  created_at: Type.String(),
  basis: Type.Object({
    money_at_risk: Money,
    tasks_ended: Type.Integer(),
    tasks_failed_by_agent: Type.Integer(),
    failure_rate_bps: Type.Integer(),
    engagements_measured: Type.Integer(),
    breaches: Type.Integer(),
    breach_rate_bps: Type.Integer(),
    credit_bps_per_breach: Type.Integer(),
    loading_pct: Type.Integer(),
  }),
  summary: Type.String({
    description: 'the quote in words: what it covers, up to how much, for how long, why that price',
  }),
})

const Claim = Type.Object({
  id: Type.String(),
  type: Covered,
  state: Type.Union([Type.Literal('paid'), Type.Literal('refused')]),
  evidence: Type.Record(Type.String(), Type.String()),
  requested: Money,
  loss: Nullable(Money),
  paid: Money,
  refuse_reason: Nullable(Type.String()),
  transfer_id: Nullable(Type.String()),
  created_at: Type.String(),
})
const Policy = Type.Object({
  id: Type.String(),
  engagement_id: Type.String(),
  state: Type.Union([Type.Literal('active'), Type.Literal('ended')]),
  coverage: Money,
  premium: Money,
  remaining: Money,
  covers: Type.Array(Covered),
  starts_at: Type.String(),
  ends_at: Type.String(),
  premium_transfer_id: Type.String(),
  quote_id: Nullable(Type.String()),
  claims: Type.Array(Claim),
  created_at: Type.String(),
})

/** An engagement's insurance: the policy (premium charged on the rail at start) and claims against it. */
export function insuranceRoutes(app: App, ctx: RentalContext, deps: InsuranceDeps) {
  const tags = ['insurance']
  app.post(
    '/api/engagements/:id/insurance/quote',
    {
      ...route.csrf('insurance:write'),
      schema: {
        summary:
          'A quote from the platform: coverage up to the money at risk (the engagement’s opened escrows), a premium priced from the agent’s measured failure and breach rates; it holds 15 minutes',
        description:
          'Declined with 409 coverage_declined, said in words, when nothing is at risk, the agent is the organization’s own, the cover would be worth no more than its premium, or the platform’s insurance funds cannot back it. A coverage_fils above the money at risk is 400 coverage_above_risk.',
        tags,
        params: Params,
        querystring: LangQuery({ additionalProperties: false }),
        body: Type.Object(
          {
            covers: Type.Optional(Type.Array(Quotable, { minItems: 1, maxItems: 2, uniqueItems: true })),
            coverage_fils: Type.Optional(Fils()),
            days: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 366, description: `default ${PRICING.defaultDays}` }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: Quote },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await quote(
            deps,
            orgOf(request),
            request.params.id,
            request.body,
            actorOfRequest(request),
            moneyLocaleOf(request, request.query.lang),
          ),
        ),
  )
  app.post(
    '/api/engagements/:id/insurance',
    {
      ...route.csrf('insurance:write'),
      ...idempotent(ctx.db, 'insurance-start'),
      schema: {
        summary:
          'Buys the platform’s quote as it is (one active policy per engagement): the premium is charged from the wallet to the insurance pool',
        description:
          'The body is {"quote_id"} only. A body of the old shape (coverage_fils, premium_fils, covers, starts_at, ends_at) is 400 quote_required naming the field: the platform prices insurance.',
        tags,
        headers: IdempotencyKeyHeader,
        params: Params,
        body: Type.Object(
          {
            quote_id: Type.Optional(Id),
            coverage_fils: Type.Optional(
              Type.Integer({ description: 'refused: the quote sets the coverage' }),
            ),
            premium_fils: Type.Optional(
              Type.Integer({ description: 'refused: the premium is the platform’s' }),
            ),
            covers: Type.Optional(Type.Array(Type.String({ maxLength: 40 }), { maxItems: 10 })),
            starts_at: Type.Optional(Type.String({ maxLength: 40 })),
            ends_at: Type.Optional(Type.String({ maxLength: 40 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Policy },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await buyPolicy(deps, orgOf(request), request.params.id, request.body, actorOfRequest(request)),
        ),
  )
  app.get(
    '/api/engagements/:id/insurance',
    {
      ...route.session('money:read'),
      schema: {
        summary:
          'The engagement’s policy (its latest), what is left of its coverage, and its claims with their states',
        tags,
        params: Params,
        querystring: LangQuery({ additionalProperties: false }),
        response: { 200: Policy },
      },
    },
    async (request) =>
      policyOf(deps, orgOf(request), request.params.id, moneyLocaleOf(request, request.query.lang)),
  )
  app.post(
    '/api/engagements/:id/insurance/claims',
    {
      ...route.csrf('insurance:write'),
      ...idempotent(ctx.db, 'insurance-claim'),
      schema: {
        summary:
          'Claims on the active policy for a covered event, with its evidence: paid once the least of the loss the record proves, the amount asked and the coverage left, or refused with the reason',
        tags,
        headers: IdempotencyKeyHeader,
        params: Params,
        body: Type.Object(
          {
            type: Covered,
            amount_fils: Type.Optional(Fils()),
            task_id: Type.Optional(Id),
            event_id: Type.Optional(Id),
            incident_id: Type.Optional(Id),
            description: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ claim: Claim, policy: Policy }) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await fileClaim(deps, orgOf(request), request.params.id, request.body, actorOfRequest(request)),
        ),
  )
  app.get(
    '/api/insurance/funds',
    {
      ...route.session(),
      schema: {
        summary:
          'An operator: the insurance pool and the platform’s reserve, the coverage sold and still owed, what is left to back new cover, and the fees',
        tags,
        querystring: LangQuery({ additionalProperties: false }),
        response: { 200: Funds },
      },
    },
    async (request) =>
      operatorFunds(
        deps,
        deps.orgs.isOperator(sessionOf(request)),
        moneyLocaleOf(request, request.query.lang),
      ),
  )
  app.post(
    '/api/insurance/reserve',
    {
      ...route.csrf(),
      schema: {
        summary:
          'An operator funds the platform’s insurance reserve from its fees (a reserve_funding transfer platform:fees → platform:insurance_reserve)',
        description: 'Idempotent with an Idempotency-Key: a replay moves nothing more.',
        tags,
        headers: IdempotencyKeyHeader,
        querystring: LangQuery({ additionalProperties: false }),
        body: Type.Object({ amount_fils: Fils() }, { additionalProperties: false }),
        response: { 201: Type.Object({ transfer_id: Type.String(), funds: Funds }) },
      },
    },
    async (request, reply) => {
      const operator = deps.orgs.isOperator(sessionOf(request))
      return reply
        .code(201)
        .send(
          await fundReserve(
            deps,
            operator,
            request.body.amount_fils,
            request.headers['idempotency-key'] as string | undefined,
            operator ? operatorActor(request) : actorOfRequest(request),
            moneyLocaleOf(request, request.query.lang),
          ),
        )
    },
  )
}
