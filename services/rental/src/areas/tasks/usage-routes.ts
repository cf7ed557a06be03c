import { type App, LangQuery, Money, money, moneyLocaleOf } from '@svc/kit'
import { Type } from 'typebox'
import { orgOf, route } from '../../http/index.ts'
import { usageSince } from './execution-store.ts'
import type { TaskDeps } from './service.ts'

const Count = Type.Integer({ minimum: 0 })

/** The first instant of the UTC month `YYYY-MM` (this month's when not given) and of the next. */
function monthBounds(month: string | undefined, now: Date) {
  const [year, index] = month
    ? [Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1]
    : [now.getUTCFullYear(), now.getUTCMonth()]
  return { from: new Date(Date.UTC(year, index, 1)), until: new Date(Date.UTC(year, index + 1, 1)) }
}

/**
 * GET /api/usage: a month's tasks and spend, per day and in total, from the same query as
 * GET /v1/org's usage (execution-store.ts usageByDay), so the Overview and Usage screens agree.
 */
export function usageRoutes(app: App, deps: TaskDeps) {
  app.get(
    '/api/usage',
    {
      ...route.session('tasks:read'),
      schema: {
        summary:
          'A month’s tasks and spend, per UTC day and in total (the same counts as GET /v1/org’s usage)',
        tags: ['tasks'],
        querystring: Type.Object(
          {
            month: Type.Optional(
              Type.String({
                pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$',
                description: 'YYYY-MM (UTC); this month when absent',
              }),
            ),
            ...LangQuery().properties,
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            month: Type.String({ description: 'YYYY-MM (UTC)' }),
            tasks: Count,
            completed: Count,
            spend: Money,
            days: Type.Array(
              Type.Object({
                day: Type.String({ description: 'YYYY-MM-DD (UTC); only days with tasks' }),
                tasks: Count,
                completed: Count,
                spend_fils: Type.Integer(),
              }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const lang = moneyLocaleOf(request, request.query.lang)
      const { from, until } = monthBounds(request.query.month, deps.now())
      const usage = await usageSince(deps.db, orgOf(request), from, until)
      return {
        month: from.toISOString().slice(0, 7),
        tasks: usage.tasks,
        completed: usage.completed,
        spend: money(usage.spendFils, 'AED', lang),
        days: usage.days.map((d) => ({
          day: d.day,
          tasks: d.tasks,
          completed: d.completed,
          spend_fils: d.spendFils,
        })),
      }
    },
  )
}
