import type { Generated } from 'kysely'
import type { IdpDb } from '../../db.ts'

/** The tables of the lifecycle area. */
export interface LifecycleTables {
  lifecycle_deliveries: {
    id: string
    client_id: string
    event: string
    body: string
    status: Generated<'pending' | 'delivered' | 'failed'>
    attempts: Generated<number>
    last_status: number | null
    last_error: string | null
    created_at: Generated<Date>
    delivered_at: Date | null
  }
}

export async function insertDelivery(
  db: IdpDb,
  row: { id: string; client_id: string; event: string; body: string },
) {
  await db.insertInto('lifecycle_deliveries').values(row).execute()
}

export async function deliveryById(db: IdpDb, id: string) {
  return db.selectFrom('lifecycle_deliveries').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function recordAttempt(
  db: IdpDb,
  id: string,
  outcome: {
    status: 'pending' | 'delivered' | 'failed'
    last_status: number | null
    last_error: string | null
  },
) {
  await db
    .updateTable('lifecycle_deliveries')
    .set((eb) => ({
      ...outcome,
      attempts: eb('attempts', '+', 1),
      ...(outcome.status === 'delivered' ? { delivered_at: new Date() } : {}),
    }))
    .where('id', '=', id)
    .execute()
}

export async function recentDeliveries(db: IdpDb, clientId: string | undefined, limit: number) {
  let query = db.selectFrom('lifecycle_deliveries').selectAll()
  if (clientId) query = query.where('client_id', '=', clientId)
  return query.orderBy('created_at', 'desc').limit(limit).execute()
}
