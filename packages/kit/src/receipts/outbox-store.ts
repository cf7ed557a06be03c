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
}

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
    .selectAll()
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
    .selectAll()
    .where('created_at', '>=', since)
    .orderBy('created_at')
    .execute()) as OutboxRow[]
}

/** Receipts recorded before `before` that are neither delivered nor refused, oldest first. */
export async function pendingOutbox(db: AnyDb, before: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('receipt_outbox')
    .select('id')
    .where('delivered_at', 'is', null)
    .where('rejected', '=', false)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute()
  return rows.map((r) => r.id as string)
}

/** The receipts waiting for the ledger (neither delivered nor refused), and the oldest one's age in seconds. */
export async function outboxBacklog(db: AnyDb): Promise<{ waiting: number; oldestAgeS: number }> {
  const { rows } = await sql<{ waiting: string; age: number | null }>`
    select count(*) as waiting, extract(epoch from now() - min(created_at))::float8 as age
    from receipt_outbox where delivered_at is null and rejected = false`.execute(db)
  return { waiting: Number(rows[0]?.waiting ?? 0), oldestAgeS: Number(rows[0]?.age ?? 0) }
}
