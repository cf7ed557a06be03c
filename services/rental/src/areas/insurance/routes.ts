import { type App, IdempotencyKeyHeader, moneyLocaleOf } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { CSRF_SECURITY, SESSION_SECURITY } from '../auth/hooks.ts'
import { Id, Nullable, Params } from '../engagements/schemas.ts'
import { actorOfRequest } from '../events/index.ts'
import { can, idempotent, orgOf } from '../orgs/permissions.ts'
import { fileClaim, type InsuranceDeps, policyOf, startPolicy } from './service.ts'

const Money = Type.Object({ amount_fils: Type.Integer(), currency: Type.String(), display: Type.String() })
const Lang = Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('ar')]))
const Fils = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
const Covered = Type.Union([
  Type.Literal('failed_task'),
  Type.Literal('sla_breach'),
  Type.Literal('incident'),
])
const DateTime = Type.String({ format: 'date-time', maxLength: 40 })

const Claim = Type.Object({
  id: Type.String(),
  type: Covered,
  state: Type.Union([Type.Literal('paid'), Type.Literal('refused')]),
  evidence: Type.Record(Type.String(), Type.String()),
  requested: Money,
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
  claims: Type.Array(Claim),
  created_at: Type.String(),
})

/** An engagement's insurance: the policy (premium charged on the rail at start) and claims against it. */
export function insuranceRoutes(app: App, ctx: RentalContext, deps: InsuranceDeps) {
  const { sessions } = ctx
  const tags = ['insurance']
  app.post(
    '/api/engagements/:id/insurance',
    {
      ...sessions.sessionAndCsrf,
      ...can('insurance:write'),
      ...idempotent(ctx.db, 'insurance-start'),
      schema: {
        summary:
          'Starts a policy on the engagement (one active at a time): the premium is charged from the wallet',
        tags,
        security: CSRF_SECURITY,
        headers: IdempotencyKeyHeader,
        params: Params,
        body: Type.Object(
          {
            coverage_fils: Fils,
            premium_fils: Fils,
            covers: Type.Array(Covered, { minItems: 1, maxItems: 3, uniqueItems: true }),
            starts_at: Type.Optional(DateTime),
            ends_at: DateTime,
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
          await startPolicy(deps, orgOf(request), request.params.id, request.body, actorOfRequest(request)),
        ),
  )
  app.get(
    '/api/engagements/:id/insurance',
    {
      ...sessions.session,
      ...can('money:read'),
      schema: {
        summary:
          'The engagement’s policy (its latest), what is left of its coverage, and its claims with their states',
        tags,
        security: SESSION_SECURITY,
        params: Params,
        querystring: Type.Object({ lang: Lang }, { additionalProperties: false }),
        response: { 200: Policy },
      },
    },
    async (request) =>
      policyOf(deps, orgOf(request), request.params.id, moneyLocaleOf(request, request.query.lang)),
  )
  app.post(
    '/api/engagements/:id/insurance/claims',
    {
      ...sessions.sessionAndCsrf,
      ...can('insurance:write'),
      ...idempotent(ctx.db, 'insurance-claim'),
      schema: {
        summary:
          'Claims on the active policy for a covered event, with its evidence: paid up to the remaining coverage once, or refused with the reason',
        tags,
        security: CSRF_SECURITY,
        headers: IdempotencyKeyHeader,
        params: Params,
        body: Type.Object(
          {
            type: Covered,
            amount_fils: Fils,
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
}
