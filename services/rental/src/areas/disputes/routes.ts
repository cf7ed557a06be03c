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
import { type TSchema, Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import { labelOf, TaskWords } from '../tasks/index.ts'
import {
  type Caller,
  type DisputeDeps,
  disputeGet,
  disputeList,
  openDispute,
  resolveDispute,
  respondDispute,
  withdrawDispute,
} from './service.ts'
import { Id, idempotent, Nullable, orgOf, Params, route, sessionOf } from '../../http/index.ts'

const Text = Type.String({ minLength: 1, maxLength: 2000 })
const LeafHash = Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', description: 'base64 RFC 9162 leaf hash' })
const EvidenceIn = Type.Object(
  {
    task_ids: Type.Optional(Type.Array(Id, { maxItems: 20, uniqueItems: true })),
    receipt_leaf_hashes: Type.Optional(Type.Array(LeafHash, { maxItems: 20, uniqueItems: true })),
  },
  { additionalProperties: false },
)
const EvidenceOut = Type.Object({
  task_ids: Type.Array(Type.String()),
  receipt_leaf_hashes: Type.Array(Type.String()),
})
const State = Type.Union([
  Type.Literal('open'),
  Type.Literal('responded'),
  Type.Literal('resolved'),
  Type.Literal('withdrawn'),
])
const Outcome = Type.Union([Type.Literal('client'), Type.Literal('provider'), Type.Literal('split')])

const Dispute = Type.Object({
  id: Type.String(),
  state: State,
  engagement_id: Type.String(),
  task_id: Nullable(Type.String()),
  agent_did: Type.String(),
  amount: Money,
  reason: Type.String(),
  evidence: EvidenceOut,
  escrow_ids: Type.Array(Type.String()),
  response: Nullable(Type.Object({ text: Type.String(), evidence: EvidenceOut })),
  resolution: Nullable(
    Type.Object({
      outcome: Outcome,
      client: Money,
      provider: Money,
      body: Type.Record(Type.String(), Type.Unknown(), {
        description: 'the resolution as signed: JCS (RFC 8785) bytes, Ed25519 by the provider identity',
      }),
      signature: Type.String({ description: 'base64url Ed25519 signature of the body' }),
      receipt_id: Nullable(Type.String()),
      settlement: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
  created_at: Type.String(),
  updated_at: Type.String(),
})

/** Disputes: opened by the client, answered by the provider, resolved by an operator, or withdrawn. */
export function disputeRoutes(app: App, ctx: RentalContext, deps: DisputeDeps) {
  const tags = ['disputes']
  const callerOf = (request: FastifyRequest): Caller => {
    const operator = deps.orgs.isOperator(sessionOf(request))
    return {
      orgId: orgOf(request),
      operator,
      actor: operator ? operatorActor(request) : actorOfRequest(request),
    }
  }
  const write = (summary: string, body: TSchema, params = true) => ({
    ...route.csrf('disputes:write'),
    schema: {
      summary,
      tags,
      ...(params ? { params: Params } : {}),
      body,
      response: { [params ? 200 : 201]: Dispute },
    },
  })
  const opening = write(
    'Opens a dispute on a task or an engagement: the escrows in question are frozen while it is open',
    Type.Object(
      {
        task_id: Type.Optional(Id),
        engagement_id: Type.Optional(Id),
        amount_fils: Fils(),
        reason: Text,
        evidence: Type.Optional(EvidenceIn),
      },
      { additionalProperties: false },
    ),
    false,
  )
  app.post(
    '/api/disputes',
    {
      ...opening,
      ...idempotent(ctx.db, 'dispute-open'),
      schema: {
        ...opening.schema,
        description:
          'Idempotent with an Idempotency-Key: a resend answers the first answer and opens no second dispute; the key with another body is 422.',
        headers: IdempotencyKeyHeader,
      },
    },
    async (request, reply) =>
      reply.code(201).send(await openDispute(deps, callerOf(request), request.body as never)),
  )
  app.get(
    '/api/disputes',
    {
      ...route.session('money:read'),
      schema: {
        summary:
          'The organization’s disputes and those about agents it provides (an operator: all), newest first; the client’s own tasks named in `lang` (job, agent, input’s first words)',
        tags,
        querystring: Type.Object(
          { ...pageQuery().properties, ...LangQuery().properties },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            disputes: Type.Array(Type.Object({ ...Dispute.properties, ...TaskWords })),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const caller = callerOf(request)
      const lang = moneyLocaleOf(request, request.query.lang)
      const page = await disputeList(deps, caller, pageOf(request.query), lang)
      // each dispute's task named for the client (its job, agent, input's first words)
      const labels = await deps.tasks.labels(
        caller.orgId,
        page.disputes.flatMap((d) => (d.task_id ? [d.task_id] : [])),
        lang,
      )
      return { ...page, disputes: page.disputes.map((d) => ({ ...d, ...labelOf(labels, d.task_id) })) }
    },
  )
  app.get(
    '/api/disputes/:id',
    {
      ...route.session('money:read'),
      schema: {
        summary: 'A dispute (its client, its provider or an operator)',
        tags,
        params: Params,
        querystring: LangQuery({ additionalProperties: false }),
        response: { 200: Dispute },
      },
    },
    async (request) =>
      disputeGet(deps, callerOf(request), request.params.id, moneyLocaleOf(request, request.query.lang)),
  )
  app.post(
    '/api/disputes/:id/respond',
    write(
      'The agent’s provider organization (or an operator) answers an open dispute',
      Type.Object({ text: Text, evidence: Type.Optional(EvidenceIn) }, { additionalProperties: false }),
    ),
    async (request) =>
      respondDispute(deps, callerOf(request), (request.params as { id: string }).id, request.body as never),
  )
  app.post(
    '/api/disputes/:id/resolve',
    write(
      'An operator resolves an open or responded dispute once: client (refunded), provider (released) or split',
      Type.Object(
        { outcome: Outcome, client_fils: Type.Optional(Fils()), provider_fils: Type.Optional(Fils()) },
        { additionalProperties: false },
      ),
    ),
    async (request) =>
      resolveDispute(deps, callerOf(request), (request.params as { id: string }).id, request.body as never),
  )
  app.post(
    '/api/disputes/:id/withdraw',
    write(
      'The client withdraws its open (or responded) dispute: the escrows are unfrozen',
      Type.Optional(Type.Object({}, { additionalProperties: false })),
    ),
    async (request) => withdrawDispute(deps, callerOf(request), (request.params as { id: string }).id),
  )
}
