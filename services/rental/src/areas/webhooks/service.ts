import { randomBytes } from 'node:crypto'
import type { Page } from '@svc/kit'
import { checkPublicUrl, PublicUrlError } from '@svc/kit/http/public-fetch'
import { inTransaction } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type Actor, EVENT_TYPES } from '../events/index.ts'
import { createDelivery, newSecret, secretContext, type WebhookDeps } from './deliver.ts'
import {
  type Attempt,
  countLive,
  deleteWebhook,
  deliveriesOf,
  type DeliveryRow,
  insertWebhook,
  liveWebhook,
  liveWebhooks,
  lockOrgWebhooks,
  type WebhookRow,
} from './store.ts'

export interface NewWebhook {
  url: string
  event_types: string[]
  description?: string | undefined
}

/** Who acts: the member (kept as the creator) and the actor the events name. */
export interface WebhookActor {
  orgId: string
  memberId: string
  actor: Actor
}

const KNOWN: ReadonlySet<string> = new Set(EVENT_TYPES)

export const webhookNotFound = (id: string) => rentalError('webhook_not_found', `no webhook ${id}`)

const view = (row: WebhookRow) => ({
  id: row.id,
  url: row.url,
  event_types: row.event_types,
  description: row.description,
  created_at: row.created_at.toISOString(),
})

const deliveryView = (row: DeliveryRow) => {
  const attempts = row.attempts as Attempt[]
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    state: row.state,
    attempt_count: attempts.length,
    attempts,
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
  }
}

/** The subscribed types, each known (else 400 naming it), repeats once; `*` alone stands for all. */
function eventTypesOf(given: string[]): string[] {
  for (const type of given)
    if (type !== '*' && !KNOWN.has(type))
      throw rentalError('unknown_event_type', `event_types: ${type} is not an event type the rental records`)
  return given.includes('*') ? ['*'] : [...new Set(given)]
}

/** The URL in its normal form (as WHATWG URL writes it), once checked. */
async function checkUrl(deps: WebhookDeps, url: string): Promise<string> {
  try {
    return (await checkPublicUrl(url, { allowPrivate: deps.config.webhooks.allowPrivate })).href
  } catch (err) {
    if (err instanceof PublicUrlError) throw rentalError('invalid_webhook_url', `url ${err.message}`)
    throw err
  }
}

/**
 * A new webhook: its URL checked (https, public addresses), its types known, at most
 * `RENTAL_MAX_WEBHOOKS` live per organization (creations of one organization serialised), a new
 * secret sealed, and `webhook.created` recorded in the same transaction; the secret is in this
 * answer only.
 */
export async function createWebhook(deps: WebhookDeps, who: WebhookActor, input: NewWebhook) {
  const eventTypes = eventTypesOf(input.event_types)
  const url = await checkUrl(deps, input.url)
  const id = `wh_${randomBytes(12).toString('base64url')}`
  const secret = newSecret()
  return inTransaction(deps.db, async (trx) => {
    await lockOrgWebhooks(trx, who.orgId)
    const max = deps.config.webhooks.max
    if ((await countLive(trx, who.orgId)) >= max)
      throw rentalError('webhook_limit', `at most ${max} webhooks per organization: delete one first`)
    const event = await deps.events.record(trx, {
      orgId: who.orgId,
      type: 'webhook.created',
      subjects: { webhook_id: id },
      actor: who.actor,
      data: { url, event_types: eventTypes, description: input.description ?? null },
    })
    const row = await insertWebhook(trx, {
      id,
      org_id: who.orgId,
      url,
      event_types: eventTypes,
      description: input.description ?? null,
      secret_sealed: deps.sealer.seal(secret, secretContext(id)),
      created_by: who.memberId,
      created_seq: event.id.slice('evt_'.length),
    })
    return { ...view(row), secret }
  })
}

export async function webhookList(deps: WebhookDeps, orgId: string, page: Page) {
  return { webhooks: (await liveWebhooks(deps.db, orgId, page.limit, page.offset)).map(view) }
}

/** Deletes the webhook: its pending deliveries stop; `webhook.deleted` recorded; a second delete is 404. */
export async function removeWebhook(deps: WebhookDeps, who: WebhookActor, id: string) {
  return inTransaction(deps.db, async (trx) => {
    if (!(await deleteWebhook(trx, who.orgId, id, deps.now()))) throw webhookNotFound(id)
    await deps.events.record(trx, {
      orgId: who.orgId,
      type: 'webhook.deleted',
      subjects: { webhook_id: id },
      actor: who.actor,
    })
    return { id, deleted: true as const }
  })
}

/** A `webhook.test` event, recorded and delivered to this webhook only; answers the delivery's id. */
export async function testWebhook(deps: WebhookDeps, who: WebhookActor, id: string) {
  return inTransaction(deps.db, async (trx) => {
    const webhook = await liveWebhook(trx, who.orgId, id, true)
    if (!webhook) throw webhookNotFound(id)
    const data = { webhook_id: id, message: 'a test delivery from the rental' }
    const subjects = { webhook_id: id }
    const recorded = await deps.events.record(trx, {
      orgId: who.orgId,
      type: 'webhook.test',
      subjects,
      actor: who.actor,
      data,
    })
    const deliveryId = await createDelivery(deps, trx, webhook, {
      id: recorded.id,
      seq: Number(recorded.id.slice('evt_'.length)),
      type: 'webhook.test',
      created_at: deps.now().toISOString(),
      subjects,
      actor: { type: who.actor.type, id: who.actor.id, ip: null, request_id: null },
      data,
    })
    return { delivery_id: deliveryId!, event_id: recorded.id }
  })
}

export async function deliveryList(deps: WebhookDeps, orgId: string, id: string, page: Page) {
  if (!(await liveWebhook(deps.db, orgId, id))) throw webhookNotFound(id)
  return { deliveries: (await deliveriesOf(deps.db, id, page.limit, page.offset)).map(deliveryView) }
}
