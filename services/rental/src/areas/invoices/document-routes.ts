import {
  type App,
  Lang,
  LangQuery,
  Money,
  type MoneyLocale,
  moneyLocaleOf,
  type Page,
  pageOf,
  pageQuery,
} from '@svc/kit'
import { type TSchema, Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { DOCUMENT_CSP } from './document.ts'
import type { InvoiceDeps } from './service.ts'
import { Nullable, orgOf, Params, route } from '../../http/index.ts'

/** What a line of an invoice or a credit note starts with: the escrow it is for and what that was. */
export const LINE_HEAD = {
  position: Type.Integer(),
  description: Type.String(),
  escrow_id: Type.String(),
  engagement_id: Type.String(),
  task_id: Nullable(Type.String()),
  agent_did: Type.String(),
}

export const CreditNote = Type.Object({
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
      ...LINE_HEAD,
      net: Money,
      vat: Money,
      gross: Money,
    }),
  ),
  totals: Type.Object({ net: Money, vat: Money, gross: Money }),
})

/** A kind of tax document as the API reads it: where, its schema, and how it is listed, read and rendered. */
export interface DocumentRoutes<V extends { number: string }> {
  path: string
  /** The list's member that holds the page (`invoices`, `credit_notes`). */
  listKey: string
  schema: TSchema
  listSummary: string
  oneSummary: string
  list(deps: InvoiceDeps, orgId: string, page: Page, locale: MoneyLocale): Promise<unknown>
  one(deps: InvoiceDeps, orgId: string, id: string, locale: MoneyLocale): Promise<V>
  html(view: V, locale: MoneyLocale): string
  pdf(view: V, locale: MoneyLocale): Promise<Buffer>
}

/** A document kind's list and its one document as JSON, a printable HTML page (English or Arabic) or a PDF. */
export function documentReadRoutes<V extends { number: string }>(
  app: App,
  ctx: RentalContext,
  deps: InvoiceDeps,
  kind: DocumentRoutes<V>,
) {
  const tags = ['invoices']
  app.get(
    kind.path,
    {
      ...route.session('money:read'),
      schema: {
        summary: kind.listSummary,
        tags,
        querystring: Type.Object(
          { ...pageQuery().properties, ...LangQuery().properties },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            [kind.listKey]: Type.Array(kind.schema),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) =>
      kind.list(
        deps,
        orgOf(request),
        pageOf(request.query),
        moneyLocaleOf(request, request.query.lang),
      ) as never,
  )
  app.get(
    `${kind.path}/:id`,
    {
      ...route.session('money:read'),
      schema: {
        summary: kind.oneSummary,
        tags,
        params: Params,
        querystring: Type.Object(
          {
            format: Type.Optional(
              Type.Union([Type.Literal('json'), Type.Literal('html'), Type.Literal('pdf')]),
            ),
            lang: Type.Optional(Lang()),
          },
          { additionalProperties: false },
        ),
        produces: ['application/json', 'text/html', 'application/pdf'],
        response: { 200: kind.schema },
      },
    },
    async (request, reply) => {
      const locale = moneyLocaleOf(request, request.query.lang)
      const accept = request.headers.accept ?? ''
      const format =
        request.query.format ??
        (/application\/pdf/.test(accept) ? 'pdf' : /text\/html/.test(accept) ? 'html' : 'json')
      const view = await kind.one(deps, orgOf(request), request.params.id, locale)
      reply.header('cache-control', 'no-store')
      if (format === 'html')
        return reply
          .type('text/html; charset=utf-8')
          .header('content-security-policy', DOCUMENT_CSP)
          .send(kind.html(view, locale) as never)
      if (format === 'pdf')
        return reply
          .type('application/pdf')
          .header('content-disposition', `inline; filename="${view.number}.pdf"`)
          .send((await kind.pdf(view, locale)) as never)
      return view as never
    },
  )
}
