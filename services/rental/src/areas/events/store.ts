import { type Compilable, type Generated, type OperationNodeSource, type Selectable, sql } from 'kysely'
import { returnedColumns } from '@svc/kit'
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
    /** The event's place in its organization's audit chain, and its link (chain.ts); null until chained. */
    chain_pos: string | null
    chain_hash: string | null
  }
  rental_audit_chains: {
    org_id: string
    last_pos: string
    last_hash: string
    updated_at: Generated<Date>
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

/** An event's values, in the column order of the inserts below. */
const eventValues = (e: EventInsert) =>
  sql`${e.org_id}, ${e.type}, ${JSON.stringify(e.subjects)}::jsonb, ${e.actor_type},
    ${e.actor_id}, ${e.ip}, ${e.request_id}, ${JSON.stringify(e.data ?? {})}::jsonb`

/**
 * Appends one event. With a stream, one statement numbers it (the stream's counter, upserted, which
 * also orders two writers of one stream) and inserts it.
 */
export async function insertEvent(
  trx: RentalDb,
  e: EventInsert,
): Promise<{ seq: string; streamSeq: number | null }> {
  const values = eventValues(e)
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

/** Appends events without a stream, in one statement, in the order given (autocommit in `db`). */
export async function insertApartEvents(db: RentalDb, events: readonly EventInsert[]): Promise<void> {
  await sql`
    insert into rental_events (org_id, type, subjects, actor_type, actor_id, ip, request_id, data)
    values ${sql.join(events.map((e) => sql`(${eventValues(e)})`))}`.execute(db)
}

/**
 * Runs `statement` (another area's insert of one row, with RETURNING) and appends one event of a
 * stream, in one statement (data-modifying CTEs): the row the statement answers, and the event's
 * numbers. A statement that answers no row writes no event either (it throws).
 */
export async function insertEventBeside<R extends object>(
  trx: RentalDb,
  e: EventInsert & { stream: string },
  statement: Compilable<R> & OperationNodeSource,
): Promise<{ row: R; seq: string; streamSeq: number }> {
  // the row's columns listed rather than `beside.*` where they are known: kept prepared (kit listed-columns)
  const names = returnedColumns(statement.toOperationNode())
  const columns = names ? sql.join(names.map((c) => sql.id('beside', c))) : sql`beside.*`
  const { rows } = await sql<R & { beside_event_seq: string; beside_event_stream_seq: number }>`
    with beside as (${statement}),
    counter as (
      insert into rental_event_streams (stream, last_seq) select ${e.stream}, 1 from beside
      on conflict (stream) do update set last_seq = rental_event_streams.last_seq + 1
      returning last_seq
    ),
    event as (
      insert into rental_events (org_id, type, subjects, actor_type, actor_id, ip, request_id, data, stream, stream_seq)
      select ${eventValues(e)}, ${e.stream}, counter.last_seq from counter
      returning seq, stream_seq
    )
    select ${columns}, event.seq as beside_event_seq, event.stream_seq as beside_event_stream_seq
    from beside cross join event`.execute(trx)
  const first = rows[0]
  if (!first) throw new Error(`no row written beside the event ${e.type}`)
  const { beside_event_seq: seq, beside_event_stream_seq: streamSeq, ...row } = first
  return { row: row as unknown as R, seq, streamSeq }
}

/**
 * Appends several events of one stream in one statement: the stream's counter moves by their
 * number, and they take its next numbers (and the log's next `seq`s) in the order given.
 */
export async function insertStreamEvents(
  trx: RentalDb,
  stream: string,
  events: readonly EventInsert[],
): Promise<Array<{ seq: string; stream_seq: number }>> {
  const n = events.length
  const rows = sql.join(
    events.map(
      (e, i) => sql`(${e.org_id}::text, ${e.type}::text, ${JSON.stringify(e.subjects)}::jsonb,
        ${e.actor_type}::text, ${e.actor_id}::text, ${e.ip}::text, ${e.request_id}::text,
        ${JSON.stringify(e.data ?? {})}::jsonb, ${i + 1}::int)`,
    ),
  )
  const { rows: inserted } = await sql<{ seq: string; stream_seq: number }>`
    with counter as (
      insert into rental_event_streams (stream, last_seq) values (${stream}, ${n}::int)
      on conflict (stream) do update set last_seq = rental_event_streams.last_seq + ${n}::int
      returning last_seq
    )
    insert into rental_events (org_id, type, subjects, actor_type, actor_id, ip, request_id, data, stream, stream_seq)
    select v.org_id, v.type, v.subjects, v.actor_type, v.actor_id, v.ip, v.request_id, v.data,
      ${stream}, counter.last_seq - ${n}::int + v.i
    from counter, (values ${rows}) as v(org_id, type, subjects, actor_type, actor_id, ip, request_id, data, i)
    order by v.i
    returning seq, stream_seq`.execute(trx)
  return inserted.sort((a, b) => a.stream_seq - b.stream_seq)
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

export interface AuditFilter {
  types?: string[] | undefined
  actorId?: string | undefined
  outcome?: string | undefined
  since?: Date | undefined
  until?: Date | undefined
  beforeSeq?: string | undefined
  limit: number
}

/** A page of the organization's record, newest first, by the audit's filters (GET /v1/audit). */
export function auditEvents(db: RentalDb, orgId: string, f: AuditFilter) {
  let q = db.selectFrom('rental_events').selectAll().where('org_id', '=', orgId)
  if (f.types?.length) q = q.where('type', 'in', f.types)
  if (f.actorId) q = q.where('actor_id', '=', f.actorId)
  if (f.outcome) q = q.where(sql`data->>'outcome'`, '=', f.outcome)
  if (f.since) q = q.where('created_at', '>=', f.since)
  if (f.until) q = q.where('created_at', '<', f.until)
  if (f.beforeSeq) q = q.where('seq', '<', f.beforeSeq)
  return q.orderBy('seq', 'desc').limit(f.limit).execute()
}

/**
 * A consumer's next events, taken under a lock on its cursor (one instance at a time; others skip):
 * those after the cursor whose transaction is older than every transaction still running, so none
 * can appear later before them. Undefined when another instance holds the cursor. `ensure` makes
 * the cursor first (needed once per consumer and process).
 */
export async function nextForConsumer(trx: RentalDb, name: string, limit: number, ensure = true) {
  if (ensure)
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
  const events = await trx
    .selectFrom('rental_events')
    .selectAll()
    .where(sql<boolean>`(txid, seq) > (${cursor.txid}::xid8, ${cursor.seq}::bigint)`)
    .where(sql<boolean>`txid < pg_snapshot_xmin(pg_current_snapshot())`)
    .orderBy('txid')
    .orderBy('seq')
    .limit(limit)
    .execute()
  return events
}

/**
 * Whether any of these consumers has a committed event past its cursor, or has no cursor yet: what
 * an idle consumer loop asks (one statement) before it runs each consumer's transaction.
 */
export async function consumersBehind(db: RentalDb, names: string[]): Promise<boolean> {
  const { rows } = await sql<{ behind: boolean }>`
    select (select count(*) from rental_event_cursors where name = any(${names}::text[])) < ${names.length}
      or exists (
        select 1 from rental_event_cursors c
        where c.name = any(${names}::text[]) and exists (
          select 1 from rental_events e
          where (e.txid, e.seq) > (c.txid, c.seq) and e.txid < pg_snapshot_xmin(pg_current_snapshot())
        )
      ) as behind`.execute(db)
  return rows[0]?.behind === true
}

export async function advanceConsumer(trx: RentalDb, name: string, last: { txid: string; seq: string }) {
  await trx
    .updateTable('rental_event_cursors')
    .set({ txid: sql`${last.txid}::xid8`, seq: last.seq, updated_at: sql`now()` })
    .where('name', '=', name)
    .execute()
}

/** What an event's data may hold about a person (or a client's words): removed by erasure. */
const PERSONAL_FIELDS = [
  'email',
  'subject',
  'name',
  'text',
  'input',
  'output',
  'comment',
  'description',
  'statement',
  'summary',
  'impact',
  'reason',
]

/** Erasure: the organization's events pseudonymised (user actors, IPs, personal data fields, a rating edit's comments); how many. */
export async function pseudonymiseEventsOf(trx: RentalDb, orgId: string): Promise<number> {
  const result = await sql`
    update rental_events
       set actor_id = case when actor_type = 'user' then 'erased' else actor_id end,
           ip = null,
           data = (data - ${sql.val(PERSONAL_FIELDS)}::text[]) #- '{from,comment}' #- '{to,comment}'
     where org_id = ${orgId}`.execute(trx)
  return Number(result.numAffectedRows ?? 0n)
}

/**
 * Retention: deletes up to `limit` of the organization's events written before `before` that every
 * named consumer's cursor has passed (none while one of them has no cursor yet), outside the held
 * engagements (`subjects.engagement_id`). Answers the deleted events' seqs.
 */
export async function deleteExpired(
  trx: RentalDb,
  orgId: string,
  before: Date,
  consumers: readonly string[],
  skipEngagements: readonly string[],
  limit: number,
) {
  let passed = sql``
  if (consumers.length) {
    const cursors = await trx
      .selectFrom('rental_event_cursors')
      .select(['name', 'txid', 'seq'])
      .where('name', 'in', consumers)
      .execute()
    if (cursors.length < new Set(consumers).size) return []
    passed = sql.join(
      cursors.map((c) => sql`and (txid, seq) <= (${c.txid}::xid8, ${c.seq}::bigint)`),
      sql` `,
    )
  }
  const skip = skipEngagements.length
    ? sql`and coalesce(subjects->>'engagement_id', '') not in (${sql.join(skipEngagements)})`
    : sql``
  const { rows } = await sql<{ seq: string }>`
    delete from rental_events where seq in (
      select seq from rental_events
      where org_id = ${orgId} and created_at < ${before} ${passed} ${skip}
      order by seq limit ${limit})
    returning seq`.execute(trx)
  return rows.map((r) => r.seq)
}
