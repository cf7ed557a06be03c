import { defineArea } from '../../context.ts'
import { statementRoutes } from './routes.ts'

/**
 * Statements: an organization's wallet and escrows over a period, read from the rail's journal
 * (`rail.transfersTouching`, `rail.balanceBefore`), the escrows through the engagements area and
 * the task receipts through the tasks area, the refunds' receipts and credit notes through refunds. No tables of its own; it changes nothing.
 */
export const statementsArea = defineArea({
  name: 'statements',
  needs: ['engagements', 'tasks', 'refunds'],
  mount: () => undefined,
  routes(app, ctx, use) {
    statementRoutes(app, { ...ctx, engagements: use.engagements, tasks: use.tasks, refunds: use.refunds })
  },
})
