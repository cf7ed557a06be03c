import type { Generated } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The identity area's table: the idp's lifecycle event bodies received (their SHA-256). */
export interface IdentityTables {
  idp_lifecycle_events: {
    body_hash: Buffer
    event: string
    subject: string
    occurred_at: Date
    received_at: Generated<Date>
  }
}

/** Remembers an event body; false when it was already received (a replay). */
export async function firstReceipt(
  db: RentalDb,
  row: { body_hash: Buffer; event: string; subject: string; occurred_at: Date },
): Promise<boolean> {
  const inserted = await db
    .insertInto('idp_lifecycle_events')
    .values(row)
    .onConflict((oc) => oc.column('body_hash').doNothing())
    .returning('event')
    .executeTakeFirst()
  return inserted !== undefined
}
