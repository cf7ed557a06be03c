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
  await sql`create index if not exists receipt_outbox_pending_idx on receipt_outbox (created_at) where delivered_at is null`.execute(
    db,
  )
}

export async function insertOutbox(
  db: AnyDb,
  row: Pick<OutboxRow, 'id' | 'receipt_type' | 'subject' | 'envelope' | 'leaf_hash'>,
) {
  await db
    .insertInto('receipt_outbox')
    .values({ ...row, envelope: JSON.stringify(row.envelope) })
    .execute()
}

export async function outboxById(db: AnyDb, id: string): Promise<OutboxRow | undefined> {
  return (await db.selectFrom('receipt_outbox').selectAll().where('id', '=', id).executeTakeFirst()) as
    OutboxRow | undefined
}

export async function markDelivered(db: AnyDb, id: string, index: number) {
  await db
    .updateTable('receipt_outbox')
    .set({ delivered_at: new Date(), ledger_index: index, last_error: null, attempts: sql`attempts + 1` })
    .where('id', '=', id)
    .execute()
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
