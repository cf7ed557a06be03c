import { type ColumnType, type Generated, sql } from 'kysely'
import type { RentalDb, RentalTables } from '../../db.ts'

/** The rail's tables: a double-entry journal (accounts, transfers, their postings). */
export interface RailTables {
  rail_accounts: {
    id: string
    kind: 'wallet' | 'escrow' | 'payout' | 'platform' | 'external'
    currency: Generated<string>
    allow_negative: Generated<boolean>
    created_at: Generated<Date>
  }
  rail_transfers: {
    id: string
    idempotency_key: string
    kind: string
    request_digest: string
    memo: ColumnType<Record<string, unknown>, string, string>
    created_at: Generated<Date>
  }
  rail_postings: { transfer_id: string; account_id: string; amount: number }
}
import type { Posting } from './rail.ts'
import { mayGoNegative } from './rules.ts'

type AccountKind = RentalTables['rail_accounts']['kind']

export async function ensureAccounts(trx: RentalDb, accounts: Array<{ id: string; kind: AccountKind }>) {
  await trx
    .insertInto('rail_accounts')
    .values(accounts.map((a) => ({ id: a.id, kind: a.kind, allow_negative: mayGoNegative(a.id) })))
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
}

/** Locks the accounts in id order (so two transfers never wait on each other in a cycle). */
export async function lockAccounts(trx: RentalDb, ids: string[]) {
  return trx
    .selectFrom('rail_accounts')
    .select(['id', 'allow_negative'])
    .where('id', 'in', [...ids].sort())
    .orderBy('id')
    .forUpdate()
    .execute()
}

export async function balanceOf(db: RentalDb, account: string): Promise<number> {
  const row = await db
    .selectFrom('rail_postings')
    .select(sql<string>`coalesce(sum(amount), 0)`.as('balance'))
    .where('account_id', '=', account)
    .executeTakeFirst()
  return Number(row?.balance ?? 0)
}

export const transferByKey = (db: RentalDb, key: string) =>
  db.selectFrom('rail_transfers').selectAll().where('idempotency_key', '=', key).executeTakeFirst()

/** Inserts the transfer unless its key exists; undefined when another transfer holds the key. */
export async function insertTransfer(
  trx: RentalDb,
  row: { id: string; idempotency_key: string; kind: string; request_digest: string; memo: string },
) {
  return trx
    .insertInto('rail_transfers')
    .values(row)
    .onConflict((oc) => oc.column('idempotency_key').doNothing())
    .returningAll()
    .executeTakeFirst()
}

export async function insertPostings(trx: RentalDb, transferId: string, postings: Posting[]) {
  await trx
    .insertInto('rail_postings')
    .values(postings.map((p) => ({ transfer_id: transferId, account_id: p.account, amount: p.amount })))
    .execute()
}

export const postingsOf = (db: RentalDb, transferId: string) =>
  db
    .selectFrom('rail_postings')
    .select(['account_id as account', 'amount'])
    .where('transfer_id', '=', transferId)
    .orderBy('account_id')
    .execute()

/** `column = any($1)`: one array parameter however many accounts (an `in` list is bounded by the protocol's 65535). */
const anyOf = (column: ReturnType<typeof sql.ref>, values: string[]) =>
  sql<boolean>`${column} = any(${values}::text[])`

/** The sum of these accounts' postings made before `at`. */
export async function balanceBefore(db: RentalDb, accounts: string[], at: Date): Promise<number> {
  if (accounts.length === 0) return 0
  const row = await db
    .selectFrom('rail_postings')
    .innerJoin('rail_transfers', 'rail_transfers.id', 'rail_postings.transfer_id')
    .select(sql<string>`coalesce(sum(rail_postings.amount), 0)`.as('balance'))
    .where(anyOf(sql.ref('rail_postings.account_id'), accounts))
    .where('rail_transfers.created_at', '<', at)
    .executeTakeFirst()
  return Number(row?.balance ?? 0)
}

/** The transfers in [from, to) that post to any of these accounts, oldest first, with all their postings. */
export async function transfersTouching(db: RentalDb, accounts: string[], from: Date, to: Date) {
  if (accounts.length === 0) return []
  const transfers = await db
    .selectFrom('rail_transfers')
    .select(['id', 'kind', 'memo', 'created_at'])
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('rail_postings')
          .select('transfer_id')
          .whereRef('rail_postings.transfer_id', '=', 'rail_transfers.id')
          .where(anyOf(sql.ref('rail_postings.account_id'), accounts)),
      ),
    )
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  if (transfers.length === 0) return []
  const postings = await db
    .selectFrom('rail_postings')
    .select(['transfer_id', 'account_id', 'amount'])
    .where(
      anyOf(
        sql.ref('transfer_id'),
        transfers.map((t) => t.id),
      ),
    )
    .orderBy('account_id')
    .execute()
  return transfers.map((t) => ({
    ...t,
    postings: postings
      .filter((p) => p.transfer_id === t.id)
      .map((p) => ({ account: p.account_id, amount: Number(p.amount) })),
  }))
}
