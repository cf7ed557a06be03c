import { type App, Lang, Money } from '@svc/kit'
import { Type } from 'typebox'
import { labelOf, TaskWords } from '../tasks/index.ts'
import { statementCsv } from './csv.ts'
import { MAX_DAYS, periodOf, type StatementDeps, statementOf, statementView } from './service.ts'
import { orgOf, route } from '../../http/index.ts'

const Nullable = <T extends import('typebox').TSchema>(t: T) => Type.Union([t, Type.Null()])
const Balances = Type.Object({ wallet: Money, held: Money })
const Kind = Type.Union([
  Type.Literal('funding'),
  Type.Literal('escrow_hold'),
  Type.Literal('release'),
  Type.Literal('fee'),
  Type.Literal('vat', {
    description: 'the VAT inside a release, to platform:vat (prices are VAT-inclusive)',
  }),
  Type.Literal('refund'),
  Type.Literal('adjustment'),
])
const Movement = Type.Object({
  transfer_id: Type.String({ description: 'the rail transfer (rail_transfers.id)' }),
  transfer_kind: Type.String(),
  kind: Kind,
  at: Type.String(),
  wallet: Money,
  held: Money,
  counter_account: Nullable(Type.String()),
  counter_account_kind: Nullable(Type.String()),
  escrow_id: Nullable(Type.String()),
  escrow_hash: Nullable(Type.String()),
  engagement_id: Nullable(Type.String()),
  task_id: Nullable(Type.String()),
  ...TaskWords,
  receipts: Type.Array(
    Type.Object({
      type: Type.Union([
        Type.Literal('escrow.released'),
        Type.Literal('task.completed'),
        Type.Literal('refund.settled'),
        Type.Literal('sla.credited'),
      ]),
      leaf_hash: Type.String(),
    }),
  ),
  refund: Nullable(
    Type.Object(
      {
        id: Type.String(),
        hash: Nullable(Type.String({ description: 'sha256 of the refund body the provider key signed' })),
        credit_note: Nullable(Type.Object({ id: Type.String(), number: Type.String() })),
      },
      { description: 'a refund line’s refund and the credit note it issued' },
    ),
  ),
  sla_credit: Nullable(
    Type.Object(
      { id: Type.String(), breach_event_id: Type.String(), term: Type.String() },
      { description: 'an SLA credit line’s credit (transfer kind sla_credit): the breach it credits' },
    ),
  ),
})
const Total = Type.Object({ count: Type.Integer(), wallet: Money, held: Money })
const Statement = Type.Object({
  organization_id: Type.String(),
  account: Type.String(),
  currency: Type.String(),
  from: Type.String(),
  to: Type.String(),
  opening: Balances,
  closing: Balances,
  movements: Type.Array(Movement),
  totals: Type.Object({
    funding: Total,
    escrow_hold: Total,
    release: Total,
    fee: Total,
    refund: Total,
    adjustment: Total,
  }),
  reconciles: Type.Boolean(),
})
const Iso = (description: string) => Type.Optional(Type.String({ maxLength: 40, description }))

export function statementRoutes(app: App, deps: StatementDeps) {
  app.get(
    '/api/statements',
    {
      ...route.session('money:read'),
      schema: {
        summary: 'The organization’s statement for a period: opening, every movement, closing',
        description: `The wallet (\`wallet:<org>\`) and the money held in its escrows over [from, to): every rail transfer posting to them, one line per counter-account (a release is a release line and a fee line), with its transfer id, the escrow, engagement and task (named in \`lang\`: its job, agent and input's first words), and the receipts' leaf hashes. Opening + movements = closing. The period spans at most ${MAX_DAYS} days; the default is the current calendar month (UTC).`,
        tags: ['statements'],
        querystring: Type.Object(
          {
            from: Iso('ISO 8601 date or date-time with an offset (inclusive)'),
            to: Iso('ISO 8601 date or date-time with an offset (exclusive), after from'),
            format: Type.Optional(
              Type.Union([Type.Literal('json'), Type.Literal('csv')], { default: 'json' }),
            ),
            lang: Type.Optional(Lang({ default: 'en' })),
          },
          { additionalProperties: false },
        ),
        produces: ['application/json', 'text/csv'],
        response: {
          200: {
            description: 'The statement, as JSON or (format=csv) CSV',
            content: {
              'application/json': { schema: Statement },
              'text/csv': { schema: Type.String() },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const orgId = orgOf(request)
      const { format = 'json', lang = 'en' } = request.query
      const statement = await statementOf(deps, orgId, periodOf(deps.now(), request.query))
      if (format === 'csv')
        return reply
          .header('content-type', 'text/csv; charset=utf-8; header=present')
          .header('content-disposition', 'attachment; filename="statement.csv"')
          .header('cache-control', 'no-store')
          .send(statementCsv(statement, lang))
      const view = statementView(orgId, statement, lang)
      // each line's task named for a person (its job, agent, input's first words)
      const labels = await deps.tasks.labels(
        orgId,
        view.movements.flatMap((m) => (m.task_id ? [m.task_id] : [])),
        lang,
      )
      return { ...view, movements: view.movements.map((m) => ({ ...m, ...labelOf(labels, m.task_id) })) }
    },
  )
}
