import { defineArea } from '../../context.ts'
import { approvalRoutes } from './routes.ts'
import { type ApprovalDeps, approvalGate, startExpiry } from './service.ts'

export type { ApprovalTables } from './store.ts'

/**
 * Approvals: a task the engagement's policy holds (always, or above a price), or whose agent asked
 * for input, waits in `input-required` until a member with `approvals:write` approves it (it runs;
 * the agent gets the answer) or rejects it (`rejected`, never charged); an unanswered one expires
 * by a durable job. Decisions and expiries are events and receipts. Table: approvals.
 */
export const approvalsArea = defineArea({
  name: 'approvals',
  needs: ['tasks', 'engagements', 'events'],
  async mount(_app, ctx, use): Promise<undefined> {
    const deps: ApprovalDeps = { ...ctx, ...use }
    // the tasks area asks the gate in its own transactions (it cannot need this area back)
    use.tasks.gateWith(approvalGate(deps))
    await startExpiry(deps)
    return undefined
  },
  routes(app, ctx, use) {
    approvalRoutes(app, { ...ctx, ...use })
  },
})
