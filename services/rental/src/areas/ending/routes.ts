import { type App, LangQuery, Money, moneyLocaleOf } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest } from '../events/index.ts'
import { engagementExport, type ExportDeps } from './export.ts'
import { exportZip } from './zip.ts'
import { type EndDeps, endEngagement } from './service.ts'
import { orgOf, Params, route } from '../../http/index.ts'

const Outcome = Type.Union([
  Type.Literal('released'),
  Type.Literal('pending_release'),
  Type.Literal('awaiting_task'),
  Type.Literal('returned'),
  Type.Literal('withdrawn'),
])
const FilsAmount = Type.Integer()
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
      amount_fils: FilsAmount,
      fee_fils: FilsAmount,
      amount: Money,
    }),
  ),
  figures: Type.Object({
    escrowed_fils: FilsAmount,
    released_fils: FilsAmount,
    fees_fils: FilsAmount,
    returned_fils: FilsAmount,
    pending_release_fils: FilsAmount,
    awaiting_task_fils: FilsAmount,
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
  const tags = ['engagements']
  app.post(
    '/api/engagements/:id/end',
    {
      ...route.csrf('engagements:write'),
      // the body is optional: none is `{}` (running: finish)
      preValidation: async (request: FastifyRequest) => {
        request.body ??= {}
      },
      schema: {
        summary:
          'Ends the engagement: no new tasks, running ones finished or canceled, unused escrows returned to the wallet, an engagement.ended receipt',
        tags,
        params: Params,
        querystring: Type.Object(LangQuery().properties, { additionalProperties: false }),
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
      ...route.session('engagements:read'),
      schema: {
        summary:
          'Everything about the engagement: SLA and signatures, addenda, escrows, tasks, statement lines, invoices and credit notes, refunds, disputes, ratings, files list, receipts with inclusion proofs (npm run verify checks them offline); JSON, or a zip with ?format=zip or Accept: application/zip',
        tags,
        params: Params,
        querystring: Type.Object(
          { format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('zip')])) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const zip =
        request.query.format === 'zip' ||
        (request.query.format === undefined && wantsZip(request.headers.accept))
      const doc = await engagementExport(deps, orgOf(request), request.params.id)
      if (!zip)
        return reply
          .header('content-disposition', `attachment; filename="${request.params.id}.export.json"`)
          .send(doc)
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${request.params.id}.export.zip"`)
        .send(await exportZip(doc, deps.invoices))
    },
  )
}

/** Whether the Accept header prefers a zip to JSON (JSON stays the default: `*\/*` or none is JSON). */
function wantsZip(accept: string | undefined) {
  if (!accept) return false
  const quality = (type: string) => {
    for (const part of accept.split(',')) {
      const [media, ...params] = part.trim().split(';')
      if (media?.trim().toLowerCase() !== type) continue
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
      return q ? Number(q.slice(2)) || 0 : 1
    }
    return 0
  }
  const zip = quality('application/zip')
  return zip > 0 && zip > quality('application/json')
}
