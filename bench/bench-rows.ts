/** The statement benches' table and their transaction shape (bench/statement.bench.ts, statement-ab.ts). */
import type { Generated, Kysely } from 'kysely'

export const ROWS = 1000

export interface BenchRows {
  bench_rows: { id: number; owner: string; amount: number; body: unknown; created_at: Generated<Date> }
}

export const CREATE_BENCH_ROWS = `create table bench_rows (id int8 primary key, owner text not null, amount int8 not null,
  body jsonb not null, created_at timestamptz not null default now());
  insert into bench_rows (id, owner, amount, body) select i, 'owner' || i, i, jsonb_build_object('i', i)
  from generate_series(1, ${ROWS}) i`

/** Begin, select for update, update, insert, select, commit: 6 statements, as a task's transaction. */
export const transactionOfFour = (db: Kysely<BenchRows>, key: number, newId: number) =>
  db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('bench_rows')
      .select(['id', 'amount'])
      .where('id', '=', key)
      .forUpdate()
      .executeTakeFirstOrThrow()
    await trx
      .updateTable('bench_rows')
      .set({ amount: row.amount + 1 })
      .where('id', '=', row.id)
      .execute()
    await trx
      .insertInto('bench_rows')
      .values({ id: newId, owner: `o${newId}`, amount: 1, body: JSON.stringify({ from: row.id }) })
      .execute()
    await trx.selectFrom('bench_rows').select('owner').where('id', '=', newId).executeTakeFirst()
  })
