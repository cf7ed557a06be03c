import { type Kysely, sql } from 'kysely'

export interface OutboxRow {
  id: string
  receipt_type: string
  subject: string
  envelope: { receipt: Record<string, unknown>; signature: string }
  leaf_hash: Buffer
  created_at: Date
  delivered_at: Date | null
  ledger_index: number | null
  attempts: number
  last_error: string | null
  rejected: boolean
  /** The W3C traceparent of the work that recorded it (null when tracing was off): its delivery joins that trace. */
  traceparent: string | null
  /** Until when a sweep that took the receipt holds it (no other instance's sweep takes it meanwhile). */
  lease_until: Date | null
}

/**
 * Every column, listed: the table is created and altered by `installOutbox` after the service's
 * columns were read (`db/listed-columns.ts`), so a `*` here could be written out as fewer.
 */
const OUTBOX_COLUMNS = [
  'id',
  'receipt_type',
  'subject',
  'envelope',
  'leaf_hash',
  'created_at',
  'delivered_at',
  'ledger_index',
  'attempts',
  'last_error',
  'rejected',
  'traceparent',
  'lease_until',
] as const satisfies ReadonlyArray<keyof OutboxRow>

/** What a delivery needs of a receipt, as recorded or as a sweep took it. */
export type PendingReceipt = Pick<OutboxRow, 'id' | 'receipt_type' | 'envelope' | 'attempts' | 'traceparent'>

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the outbox lives in any writer service's schema
export type AnyDb = Kysely<any>

/** The outbox table, created by the library itself (as pg-boss does), in the service's schema. */
export async function installOutbox(db: AnyDb): Promise<void> {
  await sql`create table if not exists receipt_outbox (
    id text primary key,
    receipt_type text not null,
    subject text not null,
    envelope jsonb not null,
    leaf_hash bytea not null unique,
    created_at timestamptz not null default now(),
    delivered_at timestamptz,
    ledger_index bigint,
    attempts integer not null default 0,
    last_error text,
    rejected boolean not null default false
  )`.execute(db)
  await sql`alter table receipt_outbox add column if not exists traceparent text`.execute(db)
  await sql`alter table receipt_outbox add column if not exists lease_until timestamptz`.execute(db)
  await sql`create index if not exists receipt_outbox_pending_idx on receipt_outbox (created_at) where delivered_at is null`.execute(
    db,
  )
}

export async function insertOutbox(
  db: AnyDb,
  row: Pick<OutboxRow, 'id' | 'receipt_type' | 'subject' | 'envelope' | 'leaf_hash'> &
    Partial<Pick<OutboxRow, 'traceparent'>>,
) {
  await db
    .insertInto('receipt_outbox')
    .values({ ...row, envelope: JSON.stringify(row.envelope) })
    .execute()
}

/** The rows of these ids (in one statement), in the order asked; undefined where there is none. */
export async function outboxByIds(db: AnyDb, ids: string[]): Promise<Array<OutboxRow | undefined>> {
  const rows = (await db
    .selectFrom('receipt_outbox')
    .select(OUTBOX_COLUMNS)
    .where('id', 'in', [...new Set(ids)])
    .execute()) as OutboxRow[]
  const byId = new Map(rows.map((r) => [r.id, r]))
  return ids.map((id) => byId.get(id))
}

/** Marks receipts delivered at the ledger's index each got, in one statement. */
export async function markDelivered(db: AnyDb, delivered: Array<{ id: string; index: number }>) {
  if (delivered.length === 0) return
  const values = sql.join(delivered.map((d) => sql`(${d.id}, ${d.index}::bigint)`))
  await sql`update receipt_outbox as o set delivered_at = now(), ledger_index = d.index, last_error = null,
    attempts = o.attempts + 1 from (values ${values}) as d (id, index) where o.id = d.id`.execute(db)
}

export async function markFailed(db: AnyDb, id: string, error: string, rejected: boolean) {
  await db
    .updateTable('receipt_outbox')
    .set({ last_error: error.slice(0, 1000), rejected, attempts: sql`attempts + 1` })
    .where('id', '=', id)
    .execute()
}

export async function outboxSince(db: AnyDb, since: Date): Promise<OutboxRow[]> {
  return (await db
    .selectFrom('receipt_outbox')
    .select(OUTBOX_COLUMNS)
    .where('created_at', '>=', since)
    .orderBy('created_at')
    .execute()) as OutboxRow[]
}

/**
 * Takes up to `limit` receipts neither delivered nor refused, recorded before `before` (a time, or
 * that many seconds ago by the database's clock), oldest first, in one statement: each is leased
 * for `leaseS` seconds, and rows another instance's sweep holds (leased, or being taken) are
 * skipped, so that two instances sweeping at once take different receipts. `untriedOnly`: only
 * receipts no attempt was made for (a failed one has its retry job).
 */
export async function takePending(
  db: AnyDb,
  q: { before: Date | { secondsAgo: number }; untriedOnly: boolean; leaseS: number; limit: number },
): Promise<PendingReceipt[]> {
  const before =
    q.before instanceof Date ? sql`${q.before}` : sql`now() - make_interval(secs => ${q.before.secondsAgo})`
  const { rows } = await sql<PendingReceipt>`
    update receipt_outbox set lease_until = now() + make_interval(secs => ${q.leaseS})
    where id in (
      select id from receipt_outbox
      where delivered_at is null and rejected = false and created_at < ${before}
        and (lease_until is null or lease_until < now()) ${q.untriedOnly ? sql`and attempts = 0` : sql``}
      order by created_at limit ${q.limit}
      for update skip locked)
    returning id, receipt_type, envelope, attempts, traceparent`.execute(db)
  return rows
}

/** The receipts waiting for the ledger (neither delivered nor refused), and the oldest one's age in seconds. */
export async function outboxBacklog(db: AnyDb): Promise<{ waiting: number; oldestAgeS: number }> {
  const { rows } = await sql<{ waiting: string; age: number | null }>`
    select count(*) as waiting, extract(epoch from now() - min(created_at))::float8 as age
    from receipt_outbox where delivered_at is null and rejected = false`.execute(db)
  return { waiting: Number(rows[0]?.waiting ?? 0), oldestAgeS: Number(rows[0]?.age ?? 0) }
}
