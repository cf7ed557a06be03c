import { createHmac, randomBytes } from 'node:crypto'
import type { Jobs } from '@svc/kit'
import { checkPublicUrl, type publicAgent, postToPublicUrl, PublicUrlError } from '@svc/kit/http/public-fetch'
import { ledgerError } from '../../errors.ts'
import { b64Encode } from '@svc/trust/base64url'
import type { LedgerDb } from '../../db.ts'
import { leavesBetween, treeState } from '../log/index.ts'
import { deleteWebhook, insertWebhook, liveWebhook, subscribersOf, webhooksOf } from './store.ts'

export const EVENT = 'receipt.recorded'
export const DELIVERY_QUEUE = 'webhooks.deliver'

export interface DeliveryJob {
  webhook: string
  from: number
  to: number
}

/** A webhook's signing secret: derived, never stored, so a database dump reveals none. */
export function secretOf(webhookKey: string, id: string): string {
  return createHmac('sha256', webhookKey).update(`webhook:${id}`).digest('base64url')
}

/** The signature header value: HMAC-SHA256 of the raw body, as the idp's relay endpoint expects. */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/** Where a subscriber's events go, through the kit's outbound guard: at subscription and at each delivery. */
export interface Outbound {
  allowPrivate: boolean
  agent: ReturnType<typeof publicAgent>
}

export async function createWebhook(
  db: LedgerDb,
  webhookKey: string,
  subscriber: string,
  url: string,
  events: string[],
  outbound: Outbound,
) {
  try {
    await checkPublicUrl(url, { allowPrivate: outbound.allowPrivate })
  } catch (err) {
    if (err instanceof PublicUrlError) throw ledgerError('invalid_request', `body.url ${err.message}`)
    throw err
  }
  const id = `whk_${randomBytes(12).toString('base64url')}`
  const row = await insertWebhook(db, { id, subscriber, url, events: [...new Set(events)] })
  return { ...row, created_at: row.created_at.toISOString(), secret: secretOf(webhookKey, id) }
}

export async function listWebhooks(db: LedgerDb, subscriber: string) {
  return (await webhooksOf(db, subscriber)).map((w) => ({ ...w, created_at: w.created_at.toISOString() }))
}

export async function removeWebhook(db: LedgerDb, subscriber: string, id: string) {
  if (!(await deleteWebhook(db, subscriber, id))) throw ledgerError('not_found', `no webhook ${id}`)
}

/** Called inside the batch transaction: one delivery job per subscriber for the new leaves. */
export async function enqueueDeliveries(jobs: Jobs, trx: LedgerDb, from: number, to: number) {
  for (const webhook of await subscribersOf(trx, EVENT))
    await jobs.enqueue(trx as never, DELIVERY_QUEUE, { webhook, from, to } satisfies DeliveryJob)
}

/**
 * Posts one `receipt.recorded` event per receipt of the batch. A failure retries the whole batch
 * (with backoff); the event id is the leaf hash, so receivers drop what they already have.
 */
export async function deliver(db: LedgerDb, webhookKey: string, job: DeliveryJob, outbound: Outbound) {
  const webhook = await liveWebhook(db, job.webhook)
  if (!webhook) return
  const secret = secretOf(webhookKey, webhook.id)
  const { size } = await treeState(db)
  for (const leaf of await leavesBetween(db, job.from, job.to)) {
    const { receipt, signature } = JSON.parse(leaf.entry.toString('utf8')) as {
      receipt: unknown
      signature: string
    }
    const body = JSON.stringify({
      id: `evt_${leaf.leaf_hash.toString('base64url')}`,
      type: EVENT,
      created_at: leaf.integrated_at.toISOString(),
      data: {
        index: leaf.leaf_index,
        // the receipt's hash, which the idp's inbound activity is addressed by (identity-provider.md)
        hash: b64Encode(leaf.leaf_hash),
        leaf_hash: b64Encode(leaf.leaf_hash),
        tree_size: size,
        receipt,
        signature,
      },
    })
    const outcome = await postToPublicUrl(webhook.url, {
      headers: {
        'content-type': 'application/json',
        'x-svc-event': EVENT,
        'x-svc-signature': signatureOf(secret, body),
      },
      body,
      ...outbound,
      timeoutMs: 10_000,
    })
    if (outcome.error) throw new Error(`${webhook.url}: ${outcome.error} for leaf ${leaf.leaf_index}`)
  }
}
