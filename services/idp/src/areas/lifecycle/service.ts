import { createHmac, randomBytes } from 'node:crypto'
import type { Jobs, Sealer } from '@svc/kit'
import type { IdpDb } from '../../db.ts'
import { subjectFor } from '../../oauth/subject.ts'
import { type ClientsService, webhookSecretOf } from '../clients/index.ts'
import type { IdpReactions } from '../../reactions.ts'
import { postToCaller } from '../../outbound.ts'
import { deliveryById, insertDelivery, recordAttempt } from './store.ts'

export const LIFECYCLE_QUEUE = 'lifecycle.deliver'
/** identity-provider.md, Lifecycle webhooks: 8 attempts over about an hour, then it stops. */
export const LIFECYCLE_ATTEMPTS = 8
const TIMEOUT_MS = 10_000

export type LifecycleEvent =
  'user.deleted' | 'user.password_changed' | 'user.email_changed' | 'consent.revoked'

/**
 * The live clients that know the user (consented, or got tokens for it), as events about the
 * user reach them: with their view of the user and where they hear of it.
 */
export async function clientsKnowing(
  deps: Pick<LifecycleDeps, 'clients' | 'reactions'>,
  db: IdpDb,
  userId: string,
) {
  const known = { userId, clientIds: new Set<string>() }
  await deps.reactions.tell('user.clients', db, known)
  return deps.clients.liveAmong(
    db,
    [...known.clientIds],
    ['client_id', 'subject_type', 'redirect_uris', 'organization_id', 'lifecycle_webhook_url'],
  )
}

export interface LifecycleDeps {
  db: IdpDb
  jobs: Jobs
  sealer: Sealer
  pairwiseSalt: string
  /** The first retry's base delay: pg-boss doubles it for each retry and adds up to as much again at random (20 s: 8 attempts over about an hour). */
  retryDelayS: number
  /** IDP_FETCH_ALLOW_PRIVATE: lifecycle URLs may be http and private (never a metadata address). */
  allowPrivate: boolean
  clients: ClientsService
  /** Where the areas that hand out tokens say which clients know a user (`user.clients`). */
  reactions: IdpReactions
}

/**
 * Tells the clients that know the user (or only `onlyClient`) of an account event, in the
 * transaction that made it: one delivery per client, its body fixed now with the client's own
 * `sub` for the user, sent by a durable job.
 */
export async function announce(
  deps: LifecycleDeps,
  trx: IdpDb,
  userId: string,
  event: LifecycleEvent,
  data: Record<string, unknown> = {},
  onlyClient?: string,
) {
  const clients = (await clientsKnowing(deps, trx, userId)).filter(
    (c) => c.lifecycle_webhook_url && (!onlyClient || c.client_id === onlyClient),
  )
  const occurredAt = new Date().toISOString()
  for (const client of clients) {
    const id = `lcd_${randomBytes(12).toString('base64url')}`
    const body = JSON.stringify({
      event,
      sub: subjectFor(client, userId, deps.pairwiseSalt),
      occurred_at: occurredAt,
      data,
    })
    await insertDelivery(trx, { id, client_id: client.client_id, event, body })
    await deps.jobs.enqueue(trx, LIFECYCLE_QUEUE, { id })
  }
}

/** `sha256=` and the HMAC-SHA256 of the exact body under the client's current webhook secret. */
export const signature = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`

async function deliver(deps: LifecycleDeps, id: string, retryCount: number) {
  const found = await deliveryById(deps.db, id)
  const client = found && (await deps.clients.anyById(deps.db, found.client_id, ['lifecycle_webhook_url']))
  if (!found || !client || found.status !== 'pending') return
  const delivery = { ...found, lifecycle_webhook_url: client.lifecycle_webhook_url }
  const last = retryCount + 1 >= LIFECYCLE_ATTEMPTS
  let outcome: { status: number | null; error: string | null }
  try {
    if (!delivery.lifecycle_webhook_url) throw new Error('the client no longer has a lifecycle URL')
    const secret = await webhookSecretOf(deps.db, deps.sealer, delivery.client_id)
    outcome = await postToCaller(delivery.lifecycle_webhook_url, {
      headers: {
        'content-type': 'application/json',
        'x-svc-event': delivery.event,
        'x-svc-signature': signature(secret!, delivery.body),
      },
      body: delivery.body,
      allowPrivate: deps.allowPrivate,
      timeoutMs: TIMEOUT_MS,
    })
  } catch (err) {
    outcome = { status: null, error: (err as Error).message }
  }
  const delivered = outcome.error === null
  await recordAttempt(deps.db, id, {
    status: delivered ? 'delivered' : last ? 'failed' : 'pending',
    last_status: outcome.status,
    last_error: outcome.error,
  })
  if (!delivered && !last) throw new Error(`lifecycle delivery ${id}: ${outcome.error}`)
}

export async function startLifecycleDelivery(deps: LifecycleDeps) {
  await deps.jobs.queue(LIFECYCLE_QUEUE, {
    retryLimit: LIFECYCLE_ATTEMPTS - 1,
    retryDelay: deps.retryDelayS,
    retryBackoff: true,
  })
  await deps.jobs.work<{ id: string }>(LIFECYCLE_QUEUE, (data, job) =>
    deliver(deps, data.id, job.retryCount ?? 0),
  )
}
