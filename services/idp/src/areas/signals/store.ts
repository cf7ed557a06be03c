import type { Generated } from 'kysely'
import type { IdpDb } from '../../db.ts'

/** The tables of the signals area. */
export interface SignalsTables {
  ssf_streams: {
    client_id: string
    delivery: 'push' | 'poll'
    endpoint_url: string | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
  ssf_events: {
    jti: string
    client_id: string
    event_type: string
    claims: Record<string, unknown>
    token: string | null
    created_at: Generated<Date>
    delivered_at: Date | null
  }
}

export async function streamOf(db: IdpDb, clientId: string) {
  return db.selectFrom('ssf_streams').selectAll().where('client_id', '=', clientId).executeTakeFirst()
}

export async function saveStream(
  db: IdpDb,
  clientId: string,
  delivery: 'push' | 'poll',
  endpointUrl: string | null,
) {
  await db
    .insertInto('ssf_streams')
    .values({ client_id: clientId, delivery, endpoint_url: endpointUrl })
    .onConflict((oc) =>
      oc.column('client_id').doUpdateSet({ delivery, endpoint_url: endpointUrl, updated_at: new Date() }),
    )
    .execute()
}

/** Unsubscribes: the stream and whatever it still held for the client go. */
export async function dropStream(db: IdpDb, clientId: string) {
  await db.deleteFrom('ssf_events').where('client_id', '=', clientId).execute()
  await db.deleteFrom('ssf_streams').where('client_id', '=', clientId).execute()
}

/** Of these clients, those with a stream. */
export async function streamsFor(db: IdpDb, clientIds: string[]) {
  if (!clientIds.length) return []
  return db.selectFrom('ssf_streams').selectAll().where('client_id', 'in', clientIds).execute()
}

export async function insertEvent(
  db: IdpDb,
  row: { jti: string; client_id: string; event_type: string; claims: Record<string, unknown> },
) {
  await db
    .insertInto('ssf_events')
    .values({ ...row, claims: JSON.stringify(row.claims) as never })
    .execute()
}

export async function eventById(db: IdpDb, jti: string) {
  return db.selectFrom('ssf_events').selectAll().where('jti', '=', jti).executeTakeFirst()
}

export async function backlog(db: IdpDb, clientId: string, limit: number) {
  return db
    .selectFrom('ssf_events')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('delivered_at', 'is', null)
    .orderBy('created_at')
    .limit(limit)
    .execute()
}

export async function backlogSize(db: IdpDb, clientId: string) {
  const { count } = await db
    .selectFrom('ssf_events')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('client_id', '=', clientId)
    .where('delivered_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(count)
}

export async function setToken(db: IdpDb, jti: string, token: string) {
  await db.updateTable('ssf_events').set({ token }).where('jti', '=', jti).execute()
}

/** Marks events delivered (pushed and accepted, or acknowledged by the poller); only the client's own. */
export async function markDelivered(db: IdpDb, clientId: string, jtis: string[]) {
  if (!jtis.length) return
  await db
    .updateTable('ssf_events')
    .set({ delivered_at: new Date() })
    .where('client_id', '=', clientId)
    .where('jti', 'in', jtis)
    .where('delivered_at', 'is', null)
    .execute()
}
