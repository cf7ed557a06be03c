import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { ConfigError } from '../errors.ts'
import { freshDatabase, onPostgres, tempFolder } from '../testing.ts'
import { type Database, openDatabase } from './database.ts'
import { migrate } from './migrator.ts'

interface Tables {
  notes: { id: string; body: string }
  accounts: { id: string; balance: number }
}

const SCHEMA = `create table notes (id text primary key, body text not null);
create table accounts (id text primary key, balance int8 not null check (balance >= 0));
create table sample (
  big int8, amount numeric(12, 2), day date, raw bytea, at timestamptz, plain timestamp,
  doc jsonb, flag boolean, tags text[], n int4, ratio float8
);`

async function database(): Promise<Database<Tables>> {
  const d = await freshDatabase('db')
  await migrate(d, tempFolder({ '0001_tables.sql': SCHEMA }))
  return d as Database<Tables>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('database', () => {
  const opened: Database[] = []
  after(async () => {
    for (const d of opened) await d.close()
  })
  const open = async () => {
    const d = await database()
    opened.push(d)
    return d
  }

  it('keeps two concurrent transactions from seeing each other’s uncommitted writes', async () => {
    const { db } = await open()
    const first = db.transaction().execute(async (trx) => {
      await trx.insertInto('notes').values({ id: 'a', body: 'from the first' }).execute()
      await sleep(50)
      throw new Error('first rolls back')
    })
    const second = db.transaction().execute(async (trx) => {
      const seen = await trx.selectFrom('notes').select('id').execute()
      await trx.insertInto('notes').values({ id: 'b', body: 'from the second' }).execute()
      return seen.map((r) => r.id)
    })
    await assert.rejects(first, /first rolls back/)
    assert.deepEqual(await second, [], 'the second transaction saw no uncommitted row')
    const rows = await db.selectFrom('notes').select('id').execute()
    assert.deepEqual(
      rows.map((r) => r.id),
      ['b'],
    )
  })

  it('loses only the rolled-back transaction’s own writes', async () => {
    const { db } = await open()
    await db.insertInto('notes').values({ id: 'kept', body: 'before' }).execute()
    const failing = db.transaction().execute(async (trx) => {
      await trx.updateTable('notes').set({ body: 'changed' }).where('id', '=', 'kept').execute()
      await trx.insertInto('notes').values({ id: 'lost', body: 'never committed' }).execute()
      await sleep(20)
      throw new Error('abort')
    })
    const committing = db.transaction().execute(async (trx) => {
      await trx.insertInto('notes').values({ id: 'other', body: 'committed meanwhile' }).execute()
    })
    await assert.rejects(failing, /abort/)
    await committing
    const rows = await db.selectFrom('notes').selectAll().orderBy('id').execute()
    assert.deepEqual(rows, [
      { id: 'kept', body: 'before' },
      { id: 'other', body: 'committed meanwhile' },
    ])
  })

  it('keeps an invariant across many concurrent transfers', async () => {
    const { db } = await open()
    await db
      .insertInto('accounts')
      .values([
        { id: 'x', balance: 1000 },
        { id: 'y', balance: 1000 },
      ])
      .execute()
    const transfer = (from: string, to: string, amount: number) =>
      db.transaction().execute(async (trx) => {
        // both rows locked in one order, whatever the direction: no deadlock
        const rows = await trx
          .selectFrom('accounts')
          .select(['id', 'balance'])
          .where('id', 'in', [from, to])
          .orderBy('id')
          .forUpdate()
          .execute()
        if ((rows.find((r) => r.id === from)?.balance ?? 0) < amount) throw new Error('insufficient funds')
        await sql`update accounts set balance = balance + case when id = ${from} then ${-amount}::int8 else ${amount}::int8 end
          where id in (${from}, ${to})`.execute(trx)
      })
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? transfer('x', 'y', 70) : transfer('y', 'x', 30))),
    )
    assert.ok(results.some((r) => r.status === 'fulfilled'))
    const rows = await db.selectFrom('accounts').select(['id', 'balance']).orderBy('id').execute()
    assert.equal(
      rows.reduce((sum, r) => sum + r.balance, 0),
      2000,
      'money is neither created nor lost',
    )
    for (const r of rows) assert.ok(r.balance >= 0)
  })

  const sample = sql`insert into sample values (
    9007199254740991, 1.50, '2026-01-02', '\\xdeadbeef', '2026-03-04T05:06:07.123Z', '2026-03-04 05:06:07.5',
    '{"a": [1, "two", null]}', true, array['x', 'y'], 42, 0.25
  )`
  const expected = {
    big: 9007199254740991,
    amount: '1.50',
    day: '2026-01-02',
    raw: Buffer.from('deadbeef', 'hex'),
    at: new Date('2026-03-04T05:06:07.123Z'),
    plain: new Date('2026-03-04T05:06:07.500Z'),
    doc: { a: [1, 'two', null] },
    flag: true,
    tags: ['x', 'y'],
    n: 42,
    ratio: 0.25,
  }

  async function sampleOn(d: Database<Tables>) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the sample table is not in the typed schema
    const db = d.db as Kysely<any>
    await sample.execute(db)
    const row = (await sql`select * from sample`.execute(db)).rows[0]
    const params = (
      await sql`select ${Buffer.from([1, 2])}::bytea as b, ${'7'}::int8 as i, ${JSON.stringify({ k: 'v' })}::jsonb as j`.execute(
        db,
      )
    ).rows[0]
    return { row, params }
  }

  it('gives the same JavaScript values on every backend', async () => {
    const d = await open()
    const { row, params } = await sampleOn(d)
    assert.deepEqual(row, expected)
    assert.deepEqual(params, { b: Buffer.from([1, 2]), i: 7, j: { k: 'v' } })
  })

  it(
    'gives identical results on PGlite and PostgreSQL for the same migrations and queries',
    {
      skip: !onPostgres && 'needs DATABASE_URL',
    },
    async () => {
      const onServer = await open()
      const embedded = (await freshDatabase('db', { embedded: true })) as Database<Tables>
      opened.push(embedded)
      await migrate(embedded, tempFolder({ '0001_tables.sql': SCHEMA }))
      assert.equal(onServer.backend, 'postgres')
      assert.equal(embedded.backend, 'pglite')
      assert.deepEqual(await sampleOn(onServer), await sampleOn(embedded))
    },
  )

  it('binds every type as a parameter, again after the table changed, and keeps a failure’s SQLSTATE', async () => {
    const d = await open()
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the sample table is not in the typed schema
    const db = d.db as Kysely<any>
    const { amount, day, ...bound } = expected
    // the same statement twice: on PGlite the second run reuses the statement prepared by the first
    for (const big of [1, 2])
      await db
        .insertInto('sample')
        .values({ ...bound, big, amount, day, doc: JSON.stringify(expected.doc) })
        .execute()
    const read = () =>
      db
        .selectFrom('sample')
        .selectAll()
        .where('big', '=', 2)
        .where(sql<boolean>`tags = ${['x', 'y']}`)
    assert.deepEqual(await read().execute(), [{ ...expected, big: 2 }])
    // a column added under a kept `select *` (PGlite): prepared again, unseen by the caller; as after
    // any DDL, the process says so (PostgreSQL: `*` is written out as the columns it knows)
    await sql`alter table sample add column extra text`.execute(db)
    await d.schemaChanged()
    assert.deepEqual(await read().execute(), [{ ...expected, big: 2, extra: null }])
    await db.insertInto('notes').values({ id: 'n', body: 'once' }).execute()
    await assert.rejects(db.insertInto('notes').values({ id: 'n', body: 'twice' }).execute(), {
      code: '23505',
    })
    assert.deepEqual(await db.selectFrom('notes').select('body').where('id', '=', 'n').execute(), [
      { body: 'once' },
    ])
  })

  it('refuses an int8 beyond JavaScript’s safe integers instead of rounding it', async () => {
    const { db } = await open()
    await assert.rejects(sql`select 9007199254740993::int8 as n`.execute(db), /safe integer/)
  })

  it('answers ping, and stops answering once closed', async () => {
    const d = await database()
    assert.equal(await d.ping(), true)
    await d.close()
    assert.equal(await d.ping(), false)
  })
})

describe('embedded database directory', () => {
  it('is locked to one opener, with a clear error for the second', async () => {
    const dataDir = `${tempFolder()}/db`
    const first = await openDatabase({ schema: 'locked', dataDir })
    try {
      await assert.rejects(openDatabase({ schema: 'locked', dataDir }), (err: Error) => {
        assert.ok(err instanceof ConfigError)
        assert.match(err.message, new RegExp(`in use by process ${process.pid}`))
        return true
      })
    } finally {
      await first.close()
    }
    const again = await openDatabase({ schema: 'locked', dataDir })
    assert.equal(await again.ping(), true, 'the lock is released on close and the data is reopened')
    await again.close()
  })
})
