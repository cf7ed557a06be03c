import { type App, IdempotencyKeyHeader, Money, moneyLocaleOf } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import { creditNoteList, creditNoteOf } from './credit-notes.ts'
import { CreditNote, documentReadRoutes, LINE_HEAD } from './document-routes.ts'
import { creditNoteHtml, creditNotePdf, invoiceHtml, invoicePdf } from './render.ts'
import { createInvoice, type InvoiceDeps, invoiceList, invoiceOf, markPaid } from './service.ts'
import { Id, idempotent, Nullable, orgOf, Params, route, sessionOf } from '../../http/index.ts'

const DateTime = Type.String({ format: 'date-time', maxLength: 40 })

export const Invoice = Type.Object({
  id: Type.String(),
  number: Type.String({ description: 'INV-<year>-<6 digits>: the issuer’s sequence, no gaps' }),
  state: Type.Union([Type.Literal('issued'), Type.Literal('paid')], {
    description: 'paid: its escrows’ releases paid it when it was issued (or a payment was marked)',
  }),
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
      ...LINE_HEAD,
      released_at: Type.String(),
      net: Money,
      vat: Money,
      gross: Money,
      platform_fee: Money,
    }),
  ),
  totals: Type.Object({ net: Money, vat: Money, gross: Money }),
  paid: Nullable(
    Type.Object({
      reference: Type.String({ description: '`escrow`: paid by the releases listed in payments' }),
      paid_at: Type.String(),
    }),
  ),
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
  payments: Type.Array(
    Type.Object({
      kind: Type.Union([Type.Literal('escrow_release'), Type.Literal('refund'), Type.Literal('marked')]),
      at: Type.String(),
      amount: Money,
      escrow_id: Nullable(Type.String()),
      transfer_id: Nullable(Type.String({ description: 'the rail transfer that moved it' })),
      refund_id: Nullable(Type.String()),
      credit_note: Nullable(Type.String({ description: 'the refund’s credit note number' })),
      reference: Nullable(Type.String({ description: 'a marked payment’s reference' })),
    }),
    {
      description:
        'what paid it, oldest first: each line’s escrow release, each refund paid back (negative), a marked payment',
    },
  ),
  balance: Money,
})

const localeOf = moneyLocaleOf

/** Invoices: issued for released escrows, listed, read (JSON, HTML, PDF), and marked paid. */
export function invoiceRoutes(app: App, ctx: RentalContext, deps: InvoiceDeps) {
  const tags = ['invoices']
  app.post(
    '/api/invoices',
    {
      ...route.csrf('invoices:write'),
      ...idempotent(ctx.db, 'invoice-create'),
      schema: {
        summary: 'Issues an invoice for the released escrows of a period or an engagement not invoiced yet',
        description:
          'Prices are VAT-inclusive: each line’s gross is its escrow, its VAT the share the release posted to platform:vat. The releases paid it: the invoice is issued paid, its payments listed, balance 0. Idempotent with an Idempotency-Key: a replay answers the first answer; the key with another body is 422.',
        tags,
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
          await createInvoice(
            deps,
            orgOf(request),
            request.body,
            actorOfRequest(request),
            localeOf(request, undefined),
          ),
        ),
  )
  documentReadRoutes(app, ctx, deps, {
    path: '/api/invoices',
    listKey: 'invoices',
    schema: Invoice,
    listSummary: 'The organization’s invoices, newest first',
    oneSummary:
      'One invoice: JSON, a printable HTML page or a PDF (Accept or format), in English or Arabic (lang, else the member’s language, else Accept-Language)',
    list: invoiceList,
    one: invoiceOf,
    html: invoiceHtml,
    pdf: invoicePdf,
  })
  app.post(
    '/api/invoices/:id/paid',
    {
      ...route.csrf('invoices:write'),
      schema: {
        summary:
          'Records the invoice’s payment once (the same reference again answers the same); an operator may for any organization',
        tags,
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
  documentReadRoutes(app, ctx, deps, {
    path: '/api/credit-notes',
    listKey: 'credit_notes',
    schema: CreditNote,
    listSummary: 'The organization’s credit notes (one per settled refund), newest first',
    oneSummary:
      'One credit note: JSON, a printable HTML page or a PDF (Accept or format), in English or Arabic (lang, else the member’s language, else Accept-Language)',
    list: creditNoteList,
    one: creditNoteOf,
    html: creditNoteHtml,
    pdf: creditNotePdf,
  })
}
