import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type CompiledQuery, type Kysely, sql } from 'kysely'
import { onPostgres } from '../testing.ts'
import { type Database, openDatabase } from './database.ts'
import { columnsOf, returnedColumns } from './listed-columns.ts'
import { inTransaction } from './transaction.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tables are made by the test
type Db = Kysely<any>

const named = async (conn: Db) =>
  (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(conn)).rows.map(
    (r) => r.statement,
  )

describe(
  'selectAll and returningAll as listed columns (PostgreSQL)',
  { skip: !onPostgres && 'needs DATABASE_URL' },
  () => {
    const schema = `t${randomBytes(5).toString('hex')}_listed`
    const opened: Database[] = []
    let db: Db
    let other: Db
    const open = async () => {
      const d = await openDatabase({
        url: process.env.DATABASE_URL,
        schema,
        dropSchemaOnClose: !opened.length,
      })
      opened.push(d)
      return d
    }
    before(async () => {
      const first = await open()
      await sql`create table notes (id int primary key, body text not null, owner int);
      create table owners (id int primary key, name text not null);
      insert into owners values (1, 'Amina'), (2, 'Omar');
      insert into notes values (1, 'n1', 1), (2, 'n2', 2)`.execute(first.db)
      await first.schemaChanged()
      db = first.db as Db
      other = (await open()).db as Db
    })
    after(async () => {
      for (const d of opened.reverse()) await d.close()
    })

    it('writes out `*` of one table, and `alias.*` in a join, with the same rows as before', async () => {
      const compiled: CompiledQuery[] = []
      const star = db.selectFrom('notes').selectAll().where('id', '=', 1)
      compiled.push(star.compile())
      assert.deepEqual(await star.execute(), [{ id: 1, body: 'n1', owner: 1 }])
      const joined = db
        .selectFrom('notes as n')
        .innerJoin('owners as o', 'o.id', 'n.owner')
        .selectAll('n')
        .select('o.name')
        .orderBy('n.id')
      compiled.push(joined.compile())
      assert.deepEqual(await joined.execute(), [
        { id: 1, body: 'n1', owner: 1, name: 'Amina' },
        { id: 2, body: 'n2', owner: 2, name: 'Omar' },
      ])
      assert.match(compiled[0]!.sql, /^select "id", "body", "owner" from "notes"/)
      assert.match(compiled[1]!.sql, /^select "n"\."id", "n"\."body", "n"\."owner", "o"\."name" from/)
      // ambiguous: every table's columns, as PostgreSQL orders them; left as `*`
      const both = db.selectFrom('notes').innerJoin('owners', 'owners.id', 'notes.owner').selectAll()
      assert.match(both.compile().sql, /^select \* from/)
    })

    it('writes out returningAll of an insert, an update and a delete', async () => {
      const inserted = db.insertInto('notes').values({ id: 3, body: 'n3', owner: 2 }).returningAll()
      assert.match(inserted.compile().sql, /returning "id", "body", "owner"$/)
      assert.deepEqual(await inserted.execute(), [{ id: 3, body: 'n3', owner: 2 }])
      assert.deepEqual(
        await db.updateTable('notes').set({ body: 'n3!' }).where('id', '=', 3).returningAll().execute(),
        [{ id: 3, body: 'n3!', owner: 2 }],
      )
      assert.deepEqual(await db.deleteFrom('notes').where('id', '=', 3).returningAll().execute(), [
        { id: 3, body: 'n3!', owner: 2 },
      ])
    })

    it('lists a builder’s returned columns for raw SQL around it, and `alias.*` with columnsOf', async () => {
      const insert = db.insertInto('notes').values({ id: 4, body: 'n4', owner: 1 }).returningAll()
      const names = returnedColumns(insert.toOperationNode())
      assert.deepEqual(names, ['id', 'body', 'owner'])
      const statement = sql<{ id: number; body: string; owner: number; name: string }>`
      with written as (${insert})
      select ${sql.join(names!.map((c) => sql.id('w', c)))}, o.name from written w join owners o on o.id = w.owner`
      const owner = sql`select ${columnsOf(db, 'owners', 'o')} from owners o where o.id = ${2}`
      for (const text of [statement.compile(db).sql, owner.compile(db).sql]) assert.doesNotMatch(text, /\*/)
      const { rows, owners, kept } = await inTransaction(db, async (trx) => ({
        rows: (await statement.execute(trx)).rows,
        owners: (await owner.execute(trx)).rows,
        kept: await named(trx),
      }))
      assert.deepEqual(rows, [{ id: 4, body: 'n4', owner: 1, name: 'Amina' }])
      assert.deepEqual(owners, [{ id: 2, name: 'Omar' }])
      assert.ok(
        kept.some((s) => s.includes('with written as')),
        'kept prepared in the transaction',
      )
      await db.deleteFrom('notes').where('id', '=', 4).execute()
      // what it does not know stays `*`
      assert.equal(
        sql`select ${columnsOf(db, 'nowhere', 'n')} from nowhere n`.compile(db).sql,
        'select "n".* from nowhere n',
      )
      assert.equal(
        returnedColumns(
          db
            .insertInto('notes')
            .values({ id: 5, body: 'x' })
            .returning(sql`1`.as('one'))
            .toOperationNode(),
        ),
        undefined,
      )
    })

    it('keeps such statements prepared inside transactions, through a column another instance adds', async () => {
      const read = (trx: Db) =>
        trx.selectFrom('notes').selectAll().where('id', '=', 2).executeTakeFirstOrThrow()
      const write = (trx: Db, body: string) =>
        trx.updateTable('notes').set({ body }).where('id', '=', 2).returningAll().executeTakeFirstOrThrow()
      const kept = await inTransaction(db, async (trx) => {
        await read(trx)
        await write(trx, 'n2')
        return named(trx)
      })
      assert.ok(
        kept.some((s) => /^select "id", "body", "owner" from "notes"/.test(s)),
        kept.join('\n'),
      )
      assert.ok(
        kept.some((s) => /^update "notes" .* returning "id", "body", "owner"$/.test(s)),
        kept.join('\n'),
      )
      // a rolling deploy: the other instance migrates; this one's transactions go on with its columns
      await sql`alter table notes add column extra text default 'x'`.execute(other)
      const during = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          inTransaction(db, async (trx) => ({
            read: await read(trx),
            written: await write(trx, `n2.${i % 2}`),
          })),
        ),
      )
      for (const { read, written } of during) {
        assert.deepEqual(Object.keys(read), ['id', 'body', 'owner'])
        assert.deepEqual(Object.keys(written), ['id', 'body', 'owner'])
      }
      // once this process learns of the change (its own migration), `*` means the new columns too
      await opened[0]!.schemaChanged()
      const { body, ...rest } = await inTransaction(db, read)
      assert.match(body, /^n2\.[01]$/)
      assert.deepEqual(rest, { id: 2, owner: 2, extra: 'x' })
    })
  },
)
