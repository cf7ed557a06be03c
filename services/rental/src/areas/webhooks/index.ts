import { publicAgent } from '@svc/kit/http/public-fetch'
import { defineArea } from '../../context.ts'
import { CONSUMER, startDeliveries, webhookConsumer } from './deliver.ts'
import type { RentalDb } from '../../db.ts'
import { webhookRoutes } from './routes.ts'
import { deleteWebhooksOf } from './store.ts'
import { webhookList } from './service.ts'
import type { Page } from '@svc/kit'

/** Outbound webhooks read the event log; other areas only erase an organization's. */
export interface WebhookService {
  /** Erasure: the organization's webhooks and their deliveries (payloads) deleted, in `trx`; how many webhooks. */
  eraseOrg(trx: RentalDb, orgId: string): Promise<number>
  /** The organization's webhooks, a page of them, as GET /api/webhooks lists them (never a signing secret). */
  list(orgId: string, page: Page): ReturnType<typeof webhookList>
}

/**
 * Outbound webhooks: an organization subscribes https URLs to event types; the log's `webhooks`
 * consumer makes a delivery per event per subscribed webhook in the transaction that moves its
 * cursor, and durable jobs send it signed per Standard Webhooks, retried on a schedule over about
 * a day, each attempt recorded. Tables: webhooks, webhook_deliveries.
 */
export const webhooksArea = defineArea({
  name: 'webhooks',
  needs: ['events', 'engagements'],
  async mount(app, ctx, use): Promise<WebhookService> {
    // every attempt connects through this agent: public addresses only, unless allowed
    const agent = publicAgent({
      allowPrivate: ctx.config.webhooks.allowPrivate,
      connectTimeoutMs: ctx.config.webhooks.timeoutMs,
    })
    app.addHook('onClose', async () => agent.close())
    const deps = { ...ctx, ...use }
    await startDeliveries({ ...deps, agent })
    use.events.consume(CONSUMER, webhookConsumer(deps))
    return { eraseOrg: deleteWebhooksOf, list: (orgId, page) => webhookList(deps, orgId, page) }
  },
  routes(app, ctx, use) {
    webhookRoutes(app, { ...ctx, ...use })
  },
})
