import { type App, moneyLocaleOf } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { CSRF_SECURITY, SESSION_SECURITY } from '../auth/hooks.ts'
import { actorOfRequest } from '../events/index.ts'
import { Params } from '../engagements/schemas.ts'
import { can, orgOf } from '../orgs/permissions.ts'
import { engagementExport, type ExportDeps } from './export.ts'
import { type EndDeps, endEngagement } from './service.ts'

const Money = Type.Object({ amount_fils: Type.Integer(), currency: Type.String(), display: Type.String() })
const Outcome = Type.Union([
  Type.Literal('released'),
  Type.Literal('pending_release'),
  Type.Literal('awaiting_task'),
  Type.Literal('returned'),
  Type.Literal('withdrawn'),
])
const Fils = Type.Integer()
const EndAnswer = Type.Object({
  engagement_id: Type.String(),
  state: Type.Literal('ended'),
  ended_at: Type.String(),
  running: Type.Union([Type.Literal('finish'), Type.Literal('cancel')]),
  canceled_tasks: Type.Array(Type.String()),
  escrows: Type.Array(
    Type.Object({
      escrow_id: Type.String(),
      task_id: Type.Union([Type.String(), Type.Null()]),
      outcome: Outcome,
      opened: Type.Boolean(),
      amount_fils: Fils,
      fee_fils: Fils,
      amount: Money,
    }),
  ),
  figures: Type.Object({
    escrowed_fils: Fils,
    released_fils: Fils,
    fees_fils: Fils,
    returned_fils: Fils,
    pending_release_fils: Fils,
    awaiting_task_fils: Fils,
  }),
  statement: Type.Object({
    escrowed: Money,
    released: Money,
    fees: Money,
    returned: Money,
    pending_release: Money,
    awaiting_task: Money,
  }),
  receipt: Type.Object({ id: Type.String(), leaf_hash: Type.String() }),
})

export function endingRoutes(app: App, ctx: RentalContext, deps: EndDeps & ExportDeps) {
  const { sessions } = ctx
  const tags = ['engagements']
  app.post(
    '/api/engagements/:id/end',
    {
      ...sessions.sessionAndCsrf,
      ...can('engagements:write'),
      // the body is optional: none is `{}` (running: finish)
      preValidation: async (request: FastifyRequest) => {
        request.body ??= {}
      },
      schema: {
        summary:
          'Ends the engagement: no new tasks, running ones finished or canceled, unused escrows returned to the wallet, an engagement.ended receipt',
        tags,
        security: CSRF_SECURITY,
        params: Params,
        querystring: Type.Object(
          { lang: Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('ar')])) },
          { additionalProperties: false },
        ),
        body: Type.Object(
          { running: Type.Optional(Type.Union([Type.Literal('finish'), Type.Literal('cancel')])) },
          { additionalProperties: false },
        ),
        response: { 200: EndAnswer },
      },
    },
    async (request) =>
      endEngagement(
        deps,
        orgOf(request),
        request.params.id,
        request.body.running ?? 'finish',
        actorOfRequest(request),
        moneyLocaleOf(request, request.query.lang),
      ),
  )
  app.get(
    '/api/engagements/:id/export',
    {
      ...sessions.session,
      ...can('engagements:read'),
      schema: {
        summary:
          'Everything about the engagement as one JSON document: SLA and signatures, escrows, tasks, events, receipts with inclusion proofs (npm run verify checks them offline)',
        tags,
        security: SESSION_SECURITY,
        params: Params,
      },
    },
    async (request, reply) => {
      const doc = await engagementExport(deps, orgOf(request), request.params.id)
      return reply
        .header('content-disposition', `attachment; filename="${request.params.id}.export.json"`)
        .send(doc)
    },
  )
}
