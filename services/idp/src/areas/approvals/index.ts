import { defineArea } from '../../context.ts'
import { approvalRoutes } from './routes.ts'
import { startApprovalExpiry } from './service.ts'

export { pendingSection } from './pages.ts'

/** The approvals' reads other areas share: the user's pending and recent ones, with the client's name. */
export { approvalsOf, pendingOf } from './store.ts'

/** Agent approval requests (CIBA-like): asked by a client, decided by the user. */
export const approvalsArea = defineArea({
  name: 'approvals',
  needs: ['receipts', 'keys'],
  async mount(app, ctx, { receipts, keys }) {
    const approvals = {
      db: ctx.db,
      jobs: ctx.jobs,
      receipts,
      issuer: ctx.issuer,
      intervalS: ctx.config.approvalIntervalS,
    }
    await startApprovalExpiry(approvals)
    approvalRoutes(app, {
      ...approvals,
      kv: ctx.kv,
      keys,
      dpop: ctx.dpop,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
    })
    return undefined
  },
})
