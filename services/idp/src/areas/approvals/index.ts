import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { defineArea, type IdpContext } from '../../context.ts'
import type { AccountsService } from '../accounts/index.ts'
import { approvalRoutes } from './routes.ts'
import { startApprovalExpiry } from './service.ts'

export { pendingSection } from './pages.ts'

/** The approvals' reads other areas share: the user's pending and recent ones, with the client's name. */
export { approvalsOf, pendingOf } from './store.ts'

const approvalDeps = (ctx: IdpContext, receipts: ReceiptWriter, accounts: AccountsService) => ({
  db: ctx.db,
  jobs: ctx.jobs,
  receipts,
  accounts,
  issuer: ctx.issuer,
  intervalS: ctx.config.approvalIntervalS,
})

/** Agent approval requests (CIBA-like): asked by a client, decided by the user. */
export const approvalsArea = defineArea({
  name: 'approvals',
  needs: ['receipts', 'keys', 'accounts', 'token'],
  async mount(_app, ctx, { receipts, accounts }) {
    await startApprovalExpiry(approvalDeps(ctx, receipts, accounts))
    return undefined
  },
  routes(app, ctx, { receipts, keys, accounts, token }) {
    approvalRoutes(app, {
      ...approvalDeps(ctx, receipts, accounts),
      kv: ctx.kv,
      keys,
      tokens: token,
      dpop: ctx.dpop,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
    })
  },
})
