import { type Generated, sql } from 'kysely'
import type { LedgerDb } from '../../db.ts'

/** The webhooks area's table: subscriptions to receipt.recorded (their secrets derived, never stored). */
export interface WebhookTables {
  webhooks: {
    id: string
    subscriber: string
    url: string
    events: string[]
    created_at: Generated<Date>
    deleted_at: Date | null
  }
}

export async function insertWebhook(
  db: LedgerDb,
  row: { id: string; subscriber: string; url: string; events: string[] },
) {
  return db
    .insertInto('webhooks')
    .values(row)
    .returning(['id', 'url', 'events', 'created_at'])
    .executeTakeFirstOrThrow()
}

export async function webhooksOf(db: LedgerDb, subscriber: string) {
  return db
    .selectFrom('webhooks')
    .select(['id', 'url', 'events', 'created_at'])
    .where('subscriber', '=', subscriber)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .execute()
}

/** Deletes a subscriber's own webhook; true when there was one. */
export async function deleteWebhook(db: LedgerDb, subscriber: string, id: string): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ deleted_at: new Date() })
    .where('id', '=', id)
    .where('subscriber', '=', subscriber)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

export async function liveWebhook(db: LedgerDb, id: string) {
  return db
    .selectFrom('webhooks')
    .select(['id', 'url'])
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
}

export async function subscribersOf(db: LedgerDb, event: string): Promise<string[]> {
  const rows = await db
    .selectFrom('webhooks')
    .select('id')
    .where('deleted_at', 'is', null)
    .where(sql<boolean>`${event} = any(events)`)
    .execute()
  return rows.map((r) => r.id)
}
