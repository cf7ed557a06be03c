import { createHmac, randomBytes } from 'node:crypto'
import { afterCommit } from '@svc/kit'
import { postToPublicUrl } from '@svc/kit/http/public-fetch'
import type { Agent } from 'undici'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { REQUEST_EVENT } from '../audit/index.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { EventService, EventView } from '../events/index.ts'
import {
  type Attempt,
  deliveryById,
  insertDelivery,
  liveWebhooksOf,
  recordAttempt,
  webhookById,
  type WebhookRow,
} from './store.ts'

/** The durable job that makes one attempt of one delivery. */
export const DELIVER_QUEUE = 'rental.webhooks.deliver'
/** The events consumer's name (its cursor in rental_event_cursors). */
export const CONSUMER = 'webhooks'

export const SECRET_PREFIX = 'whsec_'

export type WebhookDeps = Pick<RentalContext, 'db' | 'jobs' | 'sealer' | 'now' | 'config' | 'log'> & {
  events: EventService
  engagements: EngagementService
}

/** What the delivery worker adds: the dispatcher every attempt goes through (kit public-fetch). */
export type WorkerDeps = WebhookDeps & { agent: Agent }

/** A new signing secret: `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
export const newSecret = () => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`

/** The sealing context of a webhook's secret: a sealed secret copied to another row does not open. */
export const secretContext = (webhookId: string) => `rental-webhook-secret:${webhookId}`

/**
 * The Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under
 * the secret's bytes (the base64 after `whsec_`).
 */
export function signature(secret: string, msgId: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  return `v1,${createHmac('sha256', key).update(`${msgId}.${timestampS}.${body}`).digest('base64')}`
}

type Delivered = Pick<EventView, 'id' | 'seq' | 'type' | 'created_at' | 'subjects' | 'actor' | 'data'>

/** The body every attempt sends (Standard Webhooks' payload convention: type, timestamp, data). */
export const payloadOf = (event: Delivered) =>
  JSON.stringify({
    type: event.type,
    timestamp: event.created_at,
    data: {
      event_id: event.id,
      subjects: event.subjects,
      actor: { type: event.actor.type, id: event.actor.id },
      details: event.data,
    },
  })

/**
 * Never sent by the consumer: `webhook.test` goes only to its webhook (the test route makes that
 * delivery), and the audit record of each request (`request.answered`) is the audit's, not an event
 * for webhooks (not even for `*`).
 */
const NOT_DELIVERED: ReadonlySet<string> = new Set(['webhook.test', REQUEST_EVENT])

const subscribed = (types: readonly string[], type: string) => types.includes('*') || types.includes(type)

/** Whether the event comes after the webhook's creation in commit order ((txid, seq), as the consumer reads). */
const after = (event: EventView, webhook: WebhookRow) => {
  const [e, w] = [BigInt(event.txid), BigInt(webhook.created_txid)]
  return e > w || (e === w && event.seq > Number(webhook.created_seq))
}

/** A pending delivery of `event` to `webhook` and its first attempt's job, in `trx`; undefined if it existed. */
export async function createDelivery(
  deps: WebhookDeps,
  trx: RentalDb,
  webhook: WebhookRow,
  event: Delivered,
) {
  const id = `msg_${randomBytes(16).toString('base64url')}`
  const made = await insertDelivery(trx, {
    id,
    webhook_id: webhook.id,
    org_id: webhook.org_id,
    event_id: event.id,
    event_seq: String(event.seq),
    event_type: event.type,
    payload: payloadOf(event),
    next_attempt_at: deps.now(),
  })
  if (!made) return undefined
  await deps.jobs.enqueue(trx, DELIVER_QUEUE, { delivery_id: id, attempt: 1 })
  afterCommit(trx, () => deps.jobs.wake(DELIVER_QUEUE))
  return id
}

/**
 * The log's `webhooks` consumer: for each event of an organization, a delivery to each of its live
 * webhooks subscribed to the type and created before the event, unless the event's engagement
 * filters the type out (its config's `webhook_events`).
 */
export function webhookConsumer(deps: WebhookDeps) {
  return async (trx: RentalDb, events: EventView[]) => {
    const candidates = events.filter((e) => e.org_id !== null && !NOT_DELIVERED.has(e.type))
    const hooks = await liveWebhooksOf(trx, [...new Set(candidates.map((e) => e.org_id!))])
    if (!hooks.length) return
    const filters = new Map<string, readonly string[]>()
    for (const event of candidates) {
      const targets = hooks.filter(
        (w) => w.org_id === event.org_id && after(event, w) && subscribed(w.event_types, event.type),
      )
      if (!targets.length) continue
      const engagementId = event.subjects.engagement_id
      if (engagementId) {
        let filter = filters.get(engagementId)
        if (!filter) {
          filter = (await deps.engagements.configOf(trx, engagementId)).webhook_events
          filters.set(engagementId, filter)
        }
        if (!subscribed(filter, event.type)) continue
      }
      for (const webhook of targets) await createDelivery(deps, trx, webhook, event)
    }
  }
}

/**
 * One attempt of a delivery: signed with the webhook's secret, sent through the public-address
 * agent (no redirects, bounded time), recorded; a failure schedules the next attempt after the
 * next delay (RENTAL_WEBHOOK_RETRY_DELAYS_S), past the last the delivery has failed. A job whose
 * attempt was already recorded (a retry after a crash) does nothing: at least once, never a gap.
 */
export async function attemptDelivery(deps: WorkerDeps, job: { delivery_id: string; attempt: number }) {
  const fresh = (row: Awaited<ReturnType<typeof deliveryById>>) =>
    row?.state === 'pending' && (row.attempts as Attempt[]).length === job.attempt - 1
  const delivery = await deliveryById(deps.db, job.delivery_id)
  if (!delivery || !fresh(delivery)) return
  const webhook = await webhookById(deps.db, delivery.webhook_id)
  if (!webhook || webhook.deleted_at) return
  const secret = deps.sealer.open(webhook.secret_sealed, secretContext(webhook.id)).toString('utf8')
  const at = deps.now()
  const timestamp = Math.floor(Date.now() / 1000)
  const outcome = await postToPublicUrl(webhook.url, {
    body: delivery.payload,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'svc-rental-webhooks/1',
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature(secret, delivery.id, timestamp, delivery.payload),
    },
    agent: deps.agent,
    allowPrivate: deps.config.webhooks.allowPrivate,
    timeoutMs: deps.config.webhooks.timeoutMs,
  })
  await inTransaction(deps.db, async (trx) => {
    const current = await deliveryById(trx, job.delivery_id, true)
    if (!current || !fresh(current)) return
    const attempts: Attempt[] = [
      ...(current.attempts as Attempt[]),
      {
        attempt: job.attempt,
        at: at.toISOString(),
        status: outcome.status,
        duration_ms: outcome.durationMs,
        error: outcome.error,
      },
    ]
    const delays = deps.config.webhooks.retryDelaysS
    if (!outcome.error)
      return recordAttempt(trx, current.id, attempts, {
        state: 'delivered',
        nextAttemptAt: null,
        endedAt: deps.now(),
      })
    if (job.attempt > delays.length)
      return recordAttempt(trx, current.id, attempts, {
        state: 'failed',
        nextAttemptAt: null,
        endedAt: deps.now(),
      })
    const delay = delays[job.attempt - 1]!
    await recordAttempt(trx, current.id, attempts, {
      state: 'pending',
      nextAttemptAt: new Date(deps.now().getTime() + delay * 1000),
      endedAt: null,
    })
    await deps.jobs.enqueue(
      trx,
      DELIVER_QUEUE,
      { delivery_id: current.id, attempt: job.attempt + 1 },
      { startAfter: delay },
    )
  })
}

/** Declares the delivery queue and works it: several attempts at once, each bounded by the timeout. */
export async function startDeliveries(deps: WorkerDeps) {
  await deps.jobs.queue(DELIVER_QUEUE, {
    // a crash or a database outage while recording: the same attempt again soon (recorded once)
    retryLimit: 10,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: Math.ceil(deps.config.webhooks.timeoutMs / 1000) + 30,
  })
  await deps.jobs.work<{ delivery_id: string; attempt: number }>(
    DELIVER_QUEUE,
    (data) => attemptDelivery(deps, data),
    { pollingIntervalSeconds: 1, batchSize: 10 },
  )
}
