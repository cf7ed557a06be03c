import { NEWEST_FIRST, pageOfRows } from '@svc/kit'
import { type Generated, type Selectable, sql } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'

/** The webhooks area's tables: the subscriptions, and one delivery per event per webhook. */
export interface WebhookTables {
  webhooks: {
    id: string
    org_id: string
    url: string
    event_types: string[]
    description: string | null
    secret_sealed: Buffer
    created_by: string | null
    created_txid: Generated<string>
    created_seq: string
    created_at: Generated<Date>
    deleted_at: Date | null
  }
  webhook_deliveries: {
    id: string
    webhook_id: string
    org_id: string
    event_id: string
    event_seq: string
    event_type: string
    payload: string
    state: DeliveryState
    attempts: Json
    next_attempt_at: Date | null
    created_at: Generated<Date>
    ended_at: Date | null
  }
}

export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'canceled'
export type WebhookRow = Selectable<WebhookTables['webhooks']>
export type DeliveryRow = Selectable<WebhookTables['webhook_deliveries']>

/** One attempt as the deliveries list shows it. */
export interface Attempt {
  attempt: number
  at: string
  status: number | null
  duration_ms: number
  error: string | null
}

/** Serialises the creations of one organization (its limit), until the transaction ends. */
export async function lockOrgWebhooks(trx: RentalDb, orgId: string) {
  await sql`select pg_advisory_xact_lock(hashtext(${`webhooks:${orgId}`}))`.execute(trx)
}

export async function countLive(db: RentalDb, orgId: string) {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function insertWebhook(
  trx: RentalDb,
  row: Omit<WebhookRow, 'created_txid' | 'created_at' | 'deleted_at'>,
) {
  return trx
    .insertInto('webhooks')
    .values({ ...row, event_types: sql<string[]>`${row.event_types}::text[]` })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** The organization's live webhook, or undefined (another organization's too). */
export const liveWebhook = (db: RentalDb, orgId: string, id: string, lock = false) => {
  let q = db
    .selectFrom('webhooks')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null)
  if (lock) q = q.forUpdate()
  return q.executeTakeFirst()
}

export const webhookById = (db: RentalDb, id: string) =>
  db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()

export const liveWebhooks = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  pageOfRows(
    db,
    {
      table: 'webhooks',
      owner: ['org_id', orgId],
      where: (q) => q.where('deleted_at', 'is', null),
      order: NEWEST_FIRST,
    },
    { limit, offset },
  )

/** The live webhooks of these organizations (the consumer's batch). */
export const liveWebhooksOf = (db: RentalDb, orgIds: string[]) =>
  orgIds.length
    ? db
        .selectFrom('webhooks')
        .selectAll()
        .where('org_id', 'in', orgIds)
        .where('deleted_at', 'is', null)
        .execute()
    : Promise.resolve([])

/** Marks the webhook deleted and ends its pending deliveries; answers whether it was live. */
export async function deleteWebhook(trx: RentalDb, orgId: string, id: string, at: Date) {
  const row = await trx
    .updateTable('webhooks')
    .set({ deleted_at: at })
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  if (!row) return false
  await trx
    .updateTable('webhook_deliveries')
    .set({ state: 'canceled', next_attempt_at: null, ended_at: at })
    .where('webhook_id', '=', id)
    .where('state', '=', 'pending')
    .execute()
  return true
}

/** Inserts a pending delivery; undefined when that event was already given to that webhook. */
export const insertDelivery = (
  trx: RentalDb,
  row: Pick<
    DeliveryRow,
    'id' | 'webhook_id' | 'org_id' | 'event_id' | 'event_seq' | 'event_type' | 'payload'
  > & {
    next_attempt_at: Date
  },
) =>
  trx
    .insertInto('webhook_deliveries')
    .values({ ...row, state: 'pending', attempts: '[]' })
    .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
    .returning('id')
    .executeTakeFirst()

export const deliveryById = (db: RentalDb, id: string, lock = false) => {
  let q = db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id)
  if (lock) q = q.forUpdate()
  return q.executeTakeFirst()
}

export const deliveriesOf = (db: RentalDb, webhookId: string, limit: number, offset: number) =>
  pageOfRows(
    db,
    { table: 'webhook_deliveries', owner: ['webhook_id', webhookId], order: [['event_seq', 'desc']] },
    { limit, offset },
  )

/** Appends an attempt and moves the delivery to its next state. */
export async function recordAttempt(
  trx: RentalDb,
  id: string,
  attempts: Attempt[],
  next: { state: DeliveryState; nextAttemptAt: Date | null; endedAt: Date | null },
) {
  await trx
    .updateTable('webhook_deliveries')
    .set({
      attempts: JSON.stringify(attempts),
      state: next.state,
      next_attempt_at: next.nextAttemptAt,
      ended_at: next.endedAt,
    })
    .where('id', '=', id)
    .execute()
}

/** Erasure: the organization's deliveries (their payloads) and webhooks deleted; how many webhooks. */
export async function deleteWebhooksOf(trx: RentalDb, orgId: string): Promise<number> {
  await trx.deleteFrom('webhook_deliveries').where('org_id', '=', orgId).execute()
  const result = await trx.deleteFrom('webhooks').where('org_id', '=', orgId).executeTakeFirst()
  return Number(result.numDeletedRows)
}
