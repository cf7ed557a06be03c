import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, describe, it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { onPostgres } from '../testing.ts'
import { type Database, openDatabase } from './database.ts'
import { inTransaction } from './transaction.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tables are made by the test
type Db = Kysely<any>

const preparedOn = async (conn: Db) =>
  (await sql<{ name: string }>`select name from pg_prepared_statements`.execute(conn)).rows.length

describe('named prepared statements on PostgreSQL', { skip: !onPostgres && 'needs DATABASE_URL' }, () => {
  const schema = `t${randomBytes(5).toString('hex')}_prep`
  const opened: Database[] = []
  after(async () => {
    for (const d of opened.reverse()) await d.close()
  })
  /** Two instances of one service: the second plays the one that migrates during a rolling deploy. */
  const open = async (preparedStatements = true) => {
    const d = await openDatabase({
      url: process.env.DATABASE_URL,
      schema,
      dropSchemaOnClose: opened.length === 0,
      preparedStatements,
    })
    opened.push(d)
    return d.db as Db
  }

  it('prepares a statement once per connection, and nothing when turned off', async () => {
    const db = await open()
    await sql`create table notes (id int primary key, body text not null)`.execute(db)
    await db.connection().execute(async (conn) => {
      for (let i = 0; i < 3; i++)
        await conn
          .insertInto('notes')
          .values({ id: i, body: `n${i}` })
          .execute()
      assert.equal(await preparedOn(conn), 1)
    })
    const off = await open(false)
    await off.connection().execute(async (conn) => {
      assert.equal(
        (await conn.selectFrom('notes').select('body').where('id', '=', 1).execute())[0]?.body,
        'n1',
      )
      assert.equal(await preparedOn(conn), 0)
    })
  })

  it('serves the same statements on every connection of the pool at once', async () => {
    const db = (await open()) as Db
    const reads = Array.from({ length: 40 }, (_, i) =>
      db
        .selectFrom('notes')
        .select('body')
        .where('id', '=', i % 3)
        .executeTakeFirstOrThrow(),
    )
    assert.deepEqual(
      (await Promise.all(reads)).map((r) => r.body),
      Array.from({ length: 40 }, (_, i) => `n${i % 3}`),
    )
  })

  it('keeps a bounded number per connection', async () => {
    const db = opened[0]!.db as Db
    for (let round = 0; round < 2; round++)
      await db.connection().execute(async (conn) => {
        for (let n = 1; n <= 260; n++) await sql`select ${n}::int + ${sql.raw(String(n))} as v`.execute(conn)
        assert.ok((await preparedOn(conn)) <= 200, 'at most 200 named statements')
      })
    const rows = await sql<{ v: number }>`select ${1}::int + 250 as v`.execute(db)
    assert.equal(rows.rows[0]?.v, 251)
  })

  it('survives a column added by another instance under kept statements, in and out of transactions', async () => {
    const db = opened[0]!.db as Db
    const other = await open()
    const star = (trx: Db) =>
      trx.selectFrom('notes').selectAll().where('id', '=', 1).executeTakeFirstOrThrow()
    const listed = (trx: Db) => trx.selectFrom('notes').select(['id', 'body']).where('id', '=', 1).execute()
    // kept on the pool's connections (an idle one is reused first), inside and outside transactions
    await Promise.all([star(db), star(db)])
    await inTransaction(db, async (trx) => [await star(trx), await listed(trx)])
    await sql`alter table notes add column extra text`.execute(other)
    // the transaction sees the change first: no kept plan of a `*` may be in its way
    const inside = await inTransaction(db, async (trx) => ({
      star: await star(trx),
      listed: await listed(trx),
      returned: await trx
        .updateTable('notes')
        .set({ extra: 'x' })
        .where('id', '=', 2)
        .returningAll()
        .executeTakeFirstOrThrow(),
    }))
    assert.deepEqual(inside, {
      star: { id: 1, body: 'n1', extra: null },
      listed: [{ id: 1, body: 'n1' }],
      returned: { id: 2, body: 'n2', extra: 'x' },
    })
    assert.deepEqual(
      await Promise.all([star(db), star(db)]),
      Array(2).fill({ id: 1, body: 'n1', extra: null }),
    )
  })

  it('loses one transaction at most when another instance changes a listed column’s type', async () => {
    const db = opened[0]!.db as Db
    const other = opened.at(-1)!.db as Db
    const read = () =>
      inTransaction(db, (trx) => trx.selectFrom('notes').select(['body']).where('id', '=', 1).execute())
    await read()
    await sql`alter table notes alter column body type varchar(100)`.execute(other)
    const outcomes = await Promise.allSettled([read(), read()])
    // each connection that kept it may fail once (0A000); after that the pool prepares again
    for (const outcome of outcomes)
      if (outcome.status === 'rejected') assert.equal((outcome.reason as { code?: string }).code, '0A000')
    assert.deepEqual(await read(), [{ body: 'n1' }])
    assert.deepEqual(await read(), [{ body: 'n1' }])
  })
})
