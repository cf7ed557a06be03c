import { type App, DisplayedMoney, Fils, LangQuery, moneyLocaleOf, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import {
  type BudgetDeps,
  budgetDetail,
  budgetList,
  createBudget,
  deleteBudget,
  MAX_FILS,
  updateBudget,
} from './service.ts'
import { Nullable, orgOf, route } from '../../http/index.ts'

const Budget = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  scope: Type.Union([Type.Literal('organization'), Type.Literal('engagement'), Type.Literal('agent')]),
  engagement_id: Nullable(Type.String()),
  agent_did: Nullable(Type.String()),
  period: Type.Union([Type.Literal('month'), Type.Literal('custom')], {
    description: 'month: the calendar month in UTC; custom: [from, to)',
  }),
  period_start: Type.String({ description: 'the period shown (the current month; a custom one’s own)' }),
  period_end: Type.String({ description: 'exclusive' }),
  limit: DisplayedMoney,
  spent: DisplayedMoney,
  left: DisplayedMoney,
  thresholds: Type.Array(Type.Integer()),
  thresholds_crossed: Type.Array(Type.Integer(), { description: 'in the period shown' }),
  created_at: Type.String(),
  updated_at: Type.String(),
})

const LimitFils = Fils({ maximum: MAX_FILS, description: 'positive, at most 2^53-1' })
const Thresholds = Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), {
  maxItems: 10,
  description: 'percentages of the limit announced once per period as `budget.threshold`',
})
const Name = Type.String({ minLength: 1, maxLength: 200 })
const BudgetId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })

const localeOf = moneyLocaleOf

export function budgetRoutes(app: App, deps: BudgetDeps) {
  const tags = ['budgets']
  app.post(
    '/api/budgets',
    {
      ...route.csrf('budgets:write'),
      schema: {
        summary: 'A budget: a cap on spend per period for the organization, an engagement or an agent',
        description:
          'Escrows made past the limit (hiring, tasks) are refused with 402 `budget_exceeded`. Spend counts from the budget’s creation.',
        tags,
        querystring: LangQuery(),
        body: Type.Object(
          {
            name: Type.Optional(Name),
            limit_fils: LimitFils,
            thresholds: Type.Optional(Thresholds),
            engagement_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            agent_did: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            period: Type.Optional(
              Type.Union([
                Type.Literal('month'),
                Type.Object(
                  { from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time' }) },
                  { additionalProperties: false },
                ),
              ]),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Budget },
      },
    },
    async (request) =>
      createBudget(deps, orgOf(request), request.body, actorOfRequest(request), localeOf(request)),
  )
  app.get(
    '/api/budgets',
    {
      ...route.session('money:read'),
      schema: {
        summary: 'The organization’s budgets, oldest first, with what is spent and left',
        tags,
        querystring: Type.Object({ ...pageQuery().properties, ...LangQuery().properties }),
        response: {
          200: Type.Object({
            budgets: Type.Array(Budget),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => budgetList(deps, orgOf(request), pageOf(request.query), localeOf(request)),
  )
  app.get(
    '/api/budgets/:id',
    {
      ...route.session('money:read'),
      schema: {
        summary: 'A budget: its limit, spend and what is left in the period, the thresholds crossed',
        tags,
        params: BudgetId,
        querystring: LangQuery(),
        response: { 200: Budget },
      },
    },
    async (request) => budgetDetail(deps, orgOf(request), request.params.id, localeOf(request)),
  )
  app.post(
    '/api/budgets/:id',
    {
      ...route.csrf('budgets:write'),
      schema: {
        summary: 'Changes a budget’s limit, thresholds or name (the spend so far stays)',
        tags,
        params: BudgetId,
        querystring: LangQuery(),
        body: Type.Object(
          {
            name: Type.Optional(Name),
            limit_fils: Type.Optional(LimitFils),
            thresholds: Type.Optional(Thresholds),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Budget },
      },
    },
    async (request) =>
      updateBudget(
        deps,
        orgOf(request),
        request.params.id,
        request.body,
        actorOfRequest(request),
        localeOf(request),
      ),
  )
  app.delete(
    '/api/budgets/:id',
    {
      ...route.csrf('budgets:write'),
      schema: {
        summary: 'Deletes a budget: it caps nothing more, and it is not found afterwards',
        tags,
        params: BudgetId,
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) },
      },
    },
    async (request) => deleteBudget(deps, orgOf(request), request.params.id, actorOfRequest(request)),
  )
}
