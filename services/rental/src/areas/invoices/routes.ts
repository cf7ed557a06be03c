import { type App, IdempotencyKeyHeader, moneyLocaleOf, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { CSRF_SECURITY, SESSION_SECURITY, sessionOf } from '../auth/hooks.ts'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import { Id, Nullable, Params } from '../engagements/schemas.ts'
import { can, orgOf } from '../orgs/permissions.ts'
import { invoiceHtml, invoicePdf } from './render.ts'
import { creditNoteRoutes } from './credit-note-routes.ts'
import { createInvoiceOnce, type InvoiceDeps, invoiceList, invoiceOf, markPaid } from './service.ts'

const Money = Type.Object({ amount_fils: Type.Integer(), currency: Type.String(), display: Type.String() })
const DateTime = Type.String({ format: 'date-time', maxLength: 40 })
const Lang = Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('ar')]))

export const Invoice = Type.Object({
  id: Type.String(),
  number: Type.String({ description: 'INV-<year>-<6 digits>: the issuer’s sequence, no gaps' }),
  state: Type.Union([Type.Literal('issued'), Type.Literal('paid')]),
  issuer: Type.Object({ name: Type.String(), address: Type.String(), trn: Type.String() }),
  client: Type.Object({ org_id: Type.String(), name: Type.String() }),
  engagement_id: Nullable(Type.String()),
  period: Nullable(Type.Object({ from: Type.String(), to: Type.String() })),
  issued_at: Type.String(),
  due_at: Type.String(),
  currency: Type.String(),
  vat_rate_percent: Type.Number(),
  lines: Type.Array(
    Type.Object({
      position: Type.Integer(),
      description: Type.String(),
      escrow_id: Type.String(),
      engagement_id: Type.String(),
      task_id: Nullable(Type.String()),
      agent_did: Type.String(),
      released_at: Type.String(),
      net: Money,
      vat: Money,
      gross: Money,
      platform_fee: Money,
    }),
  ),
  totals: Type.Object({ net: Money, vat: Money, gross: Money }),
  paid: Nullable(Type.Object({ reference: Type.String(), paid_at: Type.String() })),
  credit_notes: Type.Array(
    Type.Object(
      {
        id: Type.String(),
        number: Type.String({ description: 'CN-<year>-<6 digits>: the credit notes’ own sequence' }),
        refund_id: Type.String(),
        escrow_id: Type.String(),
        issued_at: Type.String(),
        net: Money,
        vat: Money,
        gross: Money,
      },
      { description: 'the credit notes against the invoice’s escrows (amounts negative)' },
    ),
  ),
  balance: Money,
})

const localeOf = moneyLocaleOf

/** Invoices: issued for released escrows, listed, read (JSON, HTML, PDF), and marked paid. */
export function invoiceRoutes(app: App, ctx: RentalContext, deps: InvoiceDeps) {
  const { sessions } = ctx
  const tags = ['invoices']
  app.post(
    '/api/invoices',
    {
      ...sessions.sessionAndCsrf,
      ...can('invoices:write'),
      schema: {
        summary: 'Issues an invoice for the released escrows of a period or an engagement not invoiced yet',
        description:
          'Idempotent with an Idempotency-Key: a replay answers the first answer; the key with another body is 422.',
        tags,
        security: CSRF_SECURITY,
        headers: IdempotencyKeyHeader,
        body: Type.Object(
          { engagement_id: Type.Optional(Id), from: Type.Optional(DateTime), to: Type.Optional(DateTime) },
          { additionalProperties: false },
        ),
        response: { 201: Invoice },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await createInvoiceOnce(
            deps,
            orgOf(request),
            request.body,
            actorOfRequest(request),
            request.headers['idempotency-key'],
            localeOf(request, undefined),
          ),
        ),
  )
  app.get(
    '/api/invoices',
    {
      ...sessions.session,
      ...can('money:read'),
      schema: {
        summary: 'The organization’s invoices, newest first',
        tags,
        security: SESSION_SECURITY,
        querystring: Type.Object({ ...pageQuery().properties, lang: Lang }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            invoices: Type.Array(Invoice),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) =>
      invoiceList(deps, orgOf(request), pageOf(request.query), localeOf(request, request.query.lang)),
  )
  app.get(
    '/api/invoices/:id',
    {
      ...sessions.session,
      ...can('money:read'),
      schema: {
        summary:
          'One invoice: JSON, a printable HTML page or a PDF (Accept or format), in English or Arabic (lang, else the member’s language, else Accept-Language)',
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
        response: { 200: Invoice },
      },
    },
    async (request, reply) => {
      const locale = localeOf(request, request.query.lang)
      const accept = request.headers.accept ?? ''
      const format =
        request.query.format ??
        (/application\/pdf/.test(accept) ? 'pdf' : /text\/html/.test(accept) ? 'html' : 'json')
      const invoice = await invoiceOf(deps, orgOf(request), request.params.id, locale)
      reply.header('cache-control', 'no-store')
      if (format === 'html')
        return reply.type('text/html; charset=utf-8').send(invoiceHtml(invoice, locale) as never)
      if (format === 'pdf')
        return reply
          .type('application/pdf')
          .header('content-disposition', `inline; filename="${invoice.number}.pdf"`)
          .send((await invoicePdf(invoice, locale)) as never)
      return invoice
    },
  )
  app.post(
    '/api/invoices/:id/paid',
    {
      ...sessions.sessionAndCsrf,
      ...can('invoices:write'),
      schema: {
        summary:
          'Records the invoice’s payment once (the same reference again answers the same); an operator may for any organization',
        tags,
        security: CSRF_SECURITY,
        params: Params,
        body: Type.Object(
          {
            reference: Type.String({
              minLength: 1,
              maxLength: 200,
              pattern: '^[\\x21-\\x7e][\\x20-\\x7e]*$',
            }),
            paid_at: Type.Optional(DateTime),
          },
          { additionalProperties: false },
        ),
        response: { 200: Invoice },
      },
    },
    async (request) => {
      const operator = deps.orgs.isOperator(sessionOf(request))
      return markPaid(
        deps,
        orgOf(request),
        request.params.id,
        request.body,
        operator ? operatorActor(request) : actorOfRequest(request),
        operator,
        localeOf(request, undefined),
      )
    },
  )
  creditNoteRoutes(app, ctx, deps)
}
