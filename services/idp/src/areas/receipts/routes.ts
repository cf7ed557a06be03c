import type { App } from '@svc/kit'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { Type } from 'typebox'
import { requireAdmin } from '../../admin.ts'

/** The admin asks which of the idp's receipts the ledger lacks, and why. */
export function reconcileRoutes(app: App, receipts: ReceiptWriter, adminToken: string) {
  app.get(
    '/manage/v1/reconcile',
    {
      onRequest: async (request) => requireAdmin(request, adminToken),
      schema: {
        summary: 'Receipts of the last hours that the ledger does not hold, each with the reason',
        tags: ['management'],
        querystring: Type.Object({ hours: Type.Integer({ minimum: 1, maximum: 720, default: 24 }) }),
      },
    },
    async (request) => ({
      hours: request.query.hours,
      discrepancies: await receipts.reconcile(request.query.hours),
    }),
  )
}
