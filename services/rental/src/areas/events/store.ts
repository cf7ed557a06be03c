import { type Generated, type Selectable, sql } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'

/** The events area's tables: the log, each stream's last sequence, each durable consumer's place. */
export interface EventTables {
  rental_events: {
    seq: Generated<string>
    txid: Generated<string>
    org_id: string | null
    type: string
    stream: string | null
    stream_seq: number | null
    subjects: Json
    actor_type: ActorType
    actor_id: string | null
    ip: string | null
    request_id: string | null
    data: Json
    created_at: Generated<Date>
  }
  rental_event_streams: { stream: string; last_seq: number }
  rental_event_cursors: {
    name: string
    txid: Generated<string>
    seq: Generated<string>
    updated_at: Generated<Date>
  }
}

export type ActorType = 'user' | 'token' | 'schedule' | 'batch' | 'operator' | 'agent' | 'system'
export type EventRow = Selectable<EventTables['rental_events']>

export interface EventInsert {
  org_id: string | null
  type: string
  stream: string | null
  subjects: Record<string, string>
  actor_type: ActorType
  actor_id: string | null
  ip: string | null
  request_id: string | null
  data: unknown
}

/**
 * Appends one event. With a stream, one statement numbers it (the stream's counter, upserted, which
 * also orders two writers of one stream) and inserts it.
 */
export async function insertEvent(
  trx: RentalDb,
  e: EventInsert,
): Promise<{ seq: string; streamSeq: number | null }> {
  const values = sql`${e.org_id}, ${e.type}, ${JSON.stringify(e.subjects)}::jsonb, ${e.actor_type},
    ${e.actor_id}, ${e.ip}, ${e.request_id}, ${JSON.stringify(e.data ?? {})}::jsonb`
  if (e.stream === null) {
    const { rows } = await sql<{ seq: string }>`
      insert into rental_events (org_id, type, subjects, actor_type, actor_id, ip, request_id, data)
      values (${values}) returning seq`.execute(trx)
    return { seq: rows[0]!.seq, streamSeq: null }
  }
  const { rows } = await sql<{ seq: string; stream_seq: number }>`
    with counter as (
      insert into rental_event_streams (stream, last_seq) values (${e.stream}, 1)
      on conflict (stream) do update set last_seq = rental_event_streams.last_seq + 1
      returning last_seq
    )
    insert into rental_events (org_id, type, subjects, actor_type, actor_id, ip, request_id, data, stream, stream_seq)
    select ${values}, ${e.stream}, counter.last_seq from counter
    returning seq, stream_seq`.execute(trx)
  return { seq: rows[0]!.seq, streamSeq: rows[0]!.stream_seq }
}

/** A stream's events after its `after`-th, in order, at most `limit`. */
export const streamEvents = (db: RentalDb, stream: string, after: number, limit: number) =>
  db
    .selectFrom('rental_events')
    .selectAll()
    .where('stream', '=', stream)
    .where('stream_seq', '>', after)
    .orderBy('stream_seq')
    .limit(limit)
    .execute()

/** An organization's events, newest first (the audit record), optionally of some types. */
export function orgEvents(
  db: RentalDb,
  orgId: string,
  opts: { types?: string[] | undefined; beforeSeq?: string | undefined; limit: number },
) {
  let q = db.selectFrom('rental_events').selectAll().where('org_id', '=', orgId)
  if (opts.types?.length) q = q.where('type', 'in', opts.types)
  if (opts.beforeSeq) q = q.where('seq', '<', opts.beforeSeq)
  return q.orderBy('seq', 'desc').limit(opts.limit).execute()
}

/**
 * A consumer's next events, taken under a lock on its cursor (one instance at a time; others skip):
 * those after the cursor whose transaction is older than every transaction still running, so none
 * can appear later before them. Undefined when another instance holds the cursor.
 */
export async function nextForConsumer(trx: RentalDb, name: string, limit: number) {
  await sql`insert into rental_event_cursors (name) values (${name}) on conflict (name) do nothing`.execute(
    trx,
  )
  const cursor = await trx
    .selectFrom('rental_event_cursors')
    .select(['txid', 'seq'])
    .where('name', '=', name)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst()
  if (!cursor) return undefined
  const { rows } = await sql<{ horizon: string }>`
    select pg_snapshot_xmin(pg_current_snapshot())::text as horizon`.execute(trx)
  const horizon = rows[0]!.horizon
  const events = await trx
    .selectFrom('rental_events')
    .selectAll()
    .where(sql<boolean>`(txid, seq) > (${cursor.txid}::xid8, ${cursor.seq}::bigint)`)
    .where(sql<boolean>`txid < ${horizon}::xid8`)
    .orderBy('txid')
    .orderBy('seq')
    .limit(limit)
    .execute()
  return events
}

export async function advanceConsumer(trx: RentalDb, name: string, last: { txid: string; seq: string }) {
  await trx
    .updateTable('rental_event_cursors')
    .set({ txid: sql`${last.txid}::xid8`, seq: last.seq, updated_at: sql`now()` })
    .where('name', '=', name)
    .execute()
}
