import { ReceiptWriter } from '@svc/kit/receipts/writer'
import { defineArea } from '../../context.ts'
import { reconcileRoutes } from './routes.ts'

/** The receipts the idp writes to the ledger, through the outbox; reconciled by the admin. */
export const receiptsArea = defineArea({
  name: 'receipts',
  needs: ['identity'],
  async mount(app, ctx, { identity }) {
    const receipts = new ReceiptWriter({
      db: ctx.db,
      jobs: ctx.jobs,
      ledgerUrl: ctx.ledger.url,
      token: ctx.ledger.token,
      issuer: identity.ledger,
    })
    await receipts.start({
      metrics: app.metrics,
      onError: (err) => ctx.log.warn({ err: err.message }, 'receipt sweep failed'),
    })
    app.addHook('preClose', async () => receipts.stop())
    reconcileRoutes(app, receipts, ctx.config.adminToken)
    return receipts
  },
})
