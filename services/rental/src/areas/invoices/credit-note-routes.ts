import { type App, moneyLocaleOf, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { SESSION_SECURITY } from '../auth/hooks.ts'
import { Nullable, Params } from '../engagements/schemas.ts'
import { can, orgOf } from '../orgs/permissions.ts'
import { creditNotePdf, creditNoteHtml } from './credit-note-render.ts'
import { creditNoteList, creditNoteOf } from './credit-notes.ts'
import type { InvoiceDeps } from './service.ts'

const Money = Type.Object({ amount_fils: Type.Integer(), currency: Type.String(), display: Type.String() })
const Lang = Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('ar')]))

const CreditNote = Type.Object({
  id: Type.String(),
  number: Type.String({ description: 'CN-<year>-<6 digits>: the credit notes’ own sequence, no gaps' }),
  kind: Type.Literal('credit_note'),
  refund_id: Type.String(),
  invoice: Nullable(Type.Object({ id: Type.String(), number: Type.String() })),
  issuer: Type.Object({ name: Type.String(), address: Type.String(), trn: Type.String() }),
  client: Type.Object({ org_id: Type.String(), name: Type.String() }),
  issued_at: Type.String(),
  currency: Type.String(),
  vat_rate_percent: Type.Number(),
  reason: Type.String(),
  lines: Type.Array(
    Type.Object({
      position: Type.Integer(),
      description: Type.String(),
      escrow_id: Type.String(),
      engagement_id: Type.String(),
      task_id: Nullable(Type.String()),
      agent_did: Type.String(),
      net: Money,
      vat: Money,
      gross: Money,
    }),
  ),
  totals: Type.Object({ net: Money, vat: Money, gross: Money }),
})

/** Credit notes (issued by settled refunds): listed and read (JSON, HTML in English or Arabic, PDF). */
export function creditNoteRoutes(app: App, ctx: RentalContext, deps: InvoiceDeps) {
  const { sessions } = ctx
  const tags = ['invoices']
  app.get(
    '/api/credit-notes',
    {
      ...sessions.session,
      ...can('money:read'),
      schema: {
        summary: 'The organization’s credit notes (one per settled refund), newest first',
        tags,
        security: SESSION_SECURITY,
        querystring: Type.Object({ ...pageQuery().properties, lang: Lang }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            credit_notes: Type.Array(CreditNote),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) =>
      creditNoteList(deps, orgOf(request), pageOf(request.query), moneyLocaleOf(request, request.query.lang)),
  )
  app.get(
    '/api/credit-notes/:id',
    {
      ...sessions.session,
      ...can('money:read'),
      schema: {
        summary:
          'One credit note: JSON, a printable HTML page or a PDF (Accept or format), in English or Arabic (lang, else the member’s language, else Accept-Language)',
        tags,
        security: SESSION_SECURITY,
        params: Params,
        querystring: Type.Object(
          {
            format: Type.Optional(
              Type.Union([Type.Literal('json'), Type.Literal('html'), Type.Literal('pdf')]),
            ),
            lang: Lang,
          },
          { additionalProperties: false },
        ),
        produces: ['application/json', 'text/html', 'application/pdf'],
        response: { 200: CreditNote },
      },
    },
    async (request, reply) => {
      const locale = moneyLocaleOf(request, request.query.lang)
      const accept = request.headers.accept ?? ''
      const format =
        request.query.format ??
        (/application\/pdf/.test(accept) ? 'pdf' : /text\/html/.test(accept) ? 'html' : 'json')
      const note = await creditNoteOf(deps, orgOf(request), request.params.id, locale)
      reply.header('cache-control', 'no-store')
      if (format === 'html')
        return reply.type('text/html; charset=utf-8').send(creditNoteHtml(note, locale) as never)
      if (format === 'pdf')
        return reply
          .type('application/pdf')
          .header('content-disposition', `inline; filename="${note.number}.pdf"`)
          .send((await creditNotePdf(note, locale)) as never)
      return note
    },
  )
}
