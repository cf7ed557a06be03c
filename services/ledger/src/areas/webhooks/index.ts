import { publicAgent } from '@svc/kit/http/public-fetch'
import { defineArea } from '../../context.ts'
import type { LedgerDb } from '../../db.ts'
import { webhookRoutes } from './routes.ts'
import { type DeliveryJob, DELIVERY_QUEUE, deliver, enqueueDeliveries, type Outbound } from './service.ts'

export interface WebhookService {
  /** In the batch's transaction: one delivery job per subscriber for the leaves [from, to). */
  enqueue(trx: LedgerDb, from: number, to: number): Promise<void>
}

const agents = new Map<boolean, ReturnType<typeof publicAgent>>()
/** One guarded dispatcher per setting (connections refuse a private or metadata answer). */
function outboundOf(allowPrivate: boolean): Outbound {
  let agent = agents.get(allowPrivate)
  if (!agent) agents.set(allowPrivate, (agent = publicAgent({ allowPrivate })))
  return { allowPrivate, agent }
}

/** Webhooks: receipt.recorded delivered to subscribers by durable jobs, signed. Table: webhooks. */
export const webhooksArea = defineArea({
  name: 'webhooks',
  async mount(_app, ctx): Promise<WebhookService> {
    await ctx.jobs.queue(DELIVERY_QUEUE, { retryLimit: 12, retryDelay: 2, retryBackoff: true })
    await ctx.jobs.work<DeliveryJob>(
      DELIVERY_QUEUE,
      (job) => deliver(ctx.db, ctx.keys.webhookKey, job, outboundOf(ctx.config.webhooksAllowPrivate)),
      { pollingIntervalSeconds: 0.5 },
    )
    return { enqueue: (trx, from, to) => enqueueDeliveries(ctx.jobs, trx, from, to) }
  },
  routes(app, ctx) {
    webhookRoutes(app, ctx.db, ctx.config, ctx.keys.webhookKey, outboundOf(ctx.config.webhooksAllowPrivate))
  },
})
