import { defineArea } from '../../context.ts'
import { statementRoutes } from './routes.ts'
import { engagementStatement } from './service.ts'

export interface StatementService {
  /** The engagement's lines of the organization's statement from its hire to `to` (the export). */
  ofEngagement(
    orgId: string,
    engagement: { id: string; created_at: Date },
    to: Date,
  ): ReturnType<typeof engagementStatement>
}

/**
 * Statements: an organization's wallet and escrows over a period, read from the rail's journal
 * (`rail.transfersTouching`, `rail.balanceBefore`), the escrows through the engagements area and
 * the task receipts through the tasks area, the refunds' receipts and credit notes through refunds, the SLA credits through sla. No tables of its own; it changes nothing.
 */
export const statementsArea = defineArea({
  name: 'statements',
  needs: ['engagements', 'tasks', 'refunds', 'sla'],
  mount: (_app, ctx, use): StatementService => ({
    ofEngagement: (orgId, engagement, to) =>
      engagementStatement(
        { ...ctx, engagements: use.engagements, tasks: use.tasks, refunds: use.refunds, sla: use.sla },
        orgId,
        engagement,
        to,
      ),
  }),
  routes(app, ctx, use) {
    statementRoutes(app, {
      ...ctx,
      engagements: use.engagements,
      tasks: use.tasks,
      refunds: use.refunds,
      sla: use.sla,
    })
  },
})
