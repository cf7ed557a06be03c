import type { Generated, Insertable } from 'kysely'
import type { IdpDb } from '../../db.ts'

/** The tables of the activity area. */
export interface ActivityTables {
  inbound_activity: {
    receipt_hash: string
    user_id: string
    client_id: string
    receipt_type: string
    issuer: string
    issued_at: Date
    received_at: Generated<Date>
  }
}

/** Keeps a relayed receipt once: false when it was already kept. */
export async function keepActivity(db: IdpDb, row: Insertable<ActivityTables['inbound_activity']>) {
  const stored = await db
    .insertInto('inbound_activity')
    .values(row)
    .onConflict((oc) => oc.column('receipt_hash').doNothing())
    .returning('receipt_hash')
    .executeTakeFirst()
  return stored !== undefined
}

/** The user's latest relayed receipts, newest first. */
export async function recentActivity(db: IdpDb, userId: string, limit: number) {
  return db
    .selectFrom('inbound_activity')
    .select(['receipt_type', 'issued_at', 'receipt_hash', 'client_id'])
    .where('user_id', '=', userId)
    .orderBy('received_at', 'desc')
    .limit(limit)
    .execute()
}
