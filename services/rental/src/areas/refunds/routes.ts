import {
  type App,
  Fils,
  IdempotencyKeyHeader,
  LangQuery,
  Money,
  moneyLocaleOf,
  pageOf,
  pageQuery,
} from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import {
  acceptRefund,
  approveRefund,
  type Caller,
  type RefundDeps,
  refundList,
  requestRefund,
  refundView,
  rejectRefund,
} from './service.ts'
import { Hash, Id, idempotent, Nullable, orgOf, Params, route, sessionOf } from '../../http/index.ts'

const Reason = Type.String({ minLength: 1, maxLength: 500 })

const RefundBody = Type.Object({
  type: Type.Literal('svc.refund'),
  v: Type.Literal(1),
  refund_id: Type.String(),
  escrow_id: Type.String(),
  escrow_hash: Type.String(),
  engagement_id: Type.String(),
  task_id: Nullable(Type.String()),
  agent_did: Type.String(),
  payer_did: Type.String(),
  provider_did: Type.String(),
  amount_fils: Type.Integer(),
  fee_part_fils: Type.Integer(),
  vat_part_fils: Type.Optional(
    Type.Integer({
      description: 'the VAT taken back from platform:vat (its credit note’s); absent on refunds before 0053',
    }),
  ),
  payout_part_fils: Type.Integer(),
  currency: Type.String(),
  reason: Type.String(),
  issued_at: Type.String(),
})

const Refund = Type.Object({
  id: Type.String(),
  state: Type.Union([
    Type.Literal('requested'),
    Type.Literal('accepted'),
    Type.Literal('settled'),
    Type.Literal('rejected'),
  ]),
  escrow_id: Type.String(),
  engagement_id: Type.String(),
  task_id: Nullable(Type.String()),
  agent_did: Type.String(),
  requested: Money,
  amount: Money,
  reason: Type.String(),
  reject_reason: Nullable(Type.String()),
  transfer_id: Nullable(Type.String()),
  receipt_id: Nullable(Type.String()),
  receipt_leaf_hash: Nullable(Type.String()),
  signed: Nullable(
    Type.Object(
      {
        body: RefundBody,
        hash: Type.String({ description: 'sha256:<hex> of the body’s JCS (RFC 8785) bytes' }),
        signature: Type.String({ description: 'Ed25519 over the JCS bytes, base64url, by provider_did' }),
        provider_did: Type.String(),
      },
      { description: 'the refund as approved, signed by the provider key (null until settled)' },
    ),
  ),
  credit_note: Nullable(Type.Object({ id: Type.String(), number: Type.String() })),
  created_at: Type.String(),
  updated_at: Type.String(),
})

const localeOf = moneyLocaleOf

/** Refunds: asked for by the client, accepted by the provider or an operator, approved (settled) by an operator. */
export function refundRoutes(app: App, ctx: RentalContext, deps: RefundDeps) {
  const tags = ['refunds']
  const callerOf = (request: FastifyRequest): Caller => {
    const operator = deps.orgs.isOperator(sessionOf(request))
    return {
      orgId: orgOf(request),
      operator,
      actor: operator ? operatorActor(request) : actorOfRequest(request),
    }
  }
  app.post(
    '/api/refunds',
    {
      ...route.csrf('refunds:write'),
      ...idempotent(ctx.db, 'refund-request'),
      schema: {
        summary: 'Asks for a refund of a released escrow (by escrow or task), up to what is left to refund',
        description:
          'Idempotent with an Idempotency-Key: a replay answers the first answer; the key with another body is 422.',
        tags,
        headers: IdempotencyKeyHeader,
        body: Type.Object(
          {
            escrow_id: Type.Optional(Id),
            escrow_hash: Type.Optional(Hash),
            task_id: Type.Optional(Id),
            amount_fils: Fils(),
            reason: Reason,
          },
          { additionalProperties: false },
        ),
        response: { 201: Refund },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await requestRefund(deps, callerOf(request), request.body, localeOf(request))),
  )
  app.get(
    '/api/refunds',
    {
      ...route.session('money:read'),
      schema: {
        summary: 'The organization’s refunds, newest first',
        tags,
        querystring: Type.Object(
          { ...pageQuery().properties, ...LangQuery().properties },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            refunds: Type.Array(Refund),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) =>
      refundList(deps, orgOf(request), pageOf(request.query), localeOf(request, request.query.lang)),
  )
  app.post(
    '/api/refunds/:id/accept',
    {
      ...route.csrf('refunds:write'),
      schema: {
        summary:
          'The agent’s provider organization (or an operator) accepts a requested refund, for that amount or less',
        tags,
        params: Params,
        body: Type.Optional(
          Type.Object({ amount_fils: Type.Optional(Fils()) }, { additionalProperties: false }),
        ),
        response: { 200: Refund },
      },
    },
    async (request) =>
      refundView(
        await acceptRefund(deps, callerOf(request), request.params.id, request.body?.amount_fils),
        localeOf(request),
      ),
  )
  app.post(
    '/api/refunds/:id/approve',
    {
      ...route.csrf('refunds:write'),
      schema: {
        summary:
          'An operator settles an accepted refund once: signed by the provider key, the reversal transfer to the client’s wallet, its credit note and receipt',
        tags,
        params: Params,
        body: Type.Optional(Type.Object({}, { additionalProperties: false })),
        response: { 200: Refund },
      },
    },
    async (request) =>
      refundView(await approveRefund(deps, callerOf(request), request.params.id), localeOf(request)),
  )
  app.post(
    '/api/refunds/:id/reject',
    {
      ...route.csrf('refunds:write'),
      schema: {
        summary: 'Rejects a requested or accepted refund, with a reason',
        tags,
        params: Params,
        body: Type.Object({ reason: Reason }, { additionalProperties: false }),
        response: { 200: Refund },
      },
    },
    async (request) =>
      refundView(
        await rejectRefund(deps, callerOf(request), request.params.id, request.body.reason),
        localeOf(request),
      ),
  )
}
