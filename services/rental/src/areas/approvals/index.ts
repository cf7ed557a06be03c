import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import type { Actor } from '../events/index.ts'
import { approvalRoutes } from './routes.ts'
import { type ApprovalDeps, approvalGate, approvalList, startExpiry } from './service.ts'
import { approvalById } from './store.ts'
import { cancelToolCall, type HeldToolCall, requestToolCall } from './tool-calls.ts'
import type { Page } from '@svc/kit'

/** An approval's response schema, as GET /v1/tools/approvals shows it. */
export { Approval as ApprovalSchema } from './routes.ts'

export type { ApprovalTables } from './store.ts'
export type { ToolCallDecisions } from './tool-calls.ts'

export interface ApprovalService {
  readonly deps: ApprovalDeps
  /** The organization's pending approvals, newest first, as GET /api/approvals?state=pending lists them. */
  pending(orgId: string, page: Page): ReturnType<typeof approvalList>
  /** A tool call held for a member's decision, in `trx` (areas/connect): the approval's id. */
  requestToolCall(trx: RentalDb, call: HeldToolCall): Promise<string>
  /** Cancels a pending tool-call approval, in `trx` (its connection was revoked). */
  cancelToolCall(trx: RentalDb, approvalId: string, actor: Actor): Promise<void>
}

/**
 * Approvals: a task the engagement's policy holds (always, or above a price), or whose agent asked
 * for input, waits in `input-required` until a member with `approvals:write` approves it (it runs;
 * the agent gets the answer) or rejects it (`rejected`, never charged); an unanswered one expires
 * by a durable job. A tool call the policy holds (areas/connect) is an approval of kind
 * `tool_call`. Decisions and expiries are events and receipts. Table: approvals.
 */
export const approvalsArea = defineArea({
  name: 'approvals',
  needs: ['tasks', 'engagements', 'events'],
  async mount(_app, ctx, use): Promise<ApprovalService> {
    const deps: ApprovalDeps = { ...ctx, ...use }
    // the tasks area asks the gate in its own transactions (it cannot need this area back)
    ctx.reactions.on('tasks.gate', approvalGate(deps))
    await startExpiry(deps)
    return {
      deps,
      pending: (orgId, page) => approvalList(deps, orgId, { ...page, state: 'pending' }),
      requestToolCall: (trx, call) => requestToolCall(deps, trx, call),
      async cancelToolCall(trx, approvalId, actor) {
        const row = await approvalById(trx, approvalId, true)
        if (row) await cancelToolCall(deps, trx, row, actor)
      },
    }
  },
  routes(app, _ctx, _use, own) {
    approvalRoutes(app, own.deps)
  },
})
