import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { freshDatabase, onPostgres, tempFolder } from '../testing.ts'
import { type Database, openDatabase } from './database.ts'
import { migrate } from './migrator.ts'

const FIRST = 'create table a (id int primary key);'
const SECOND = 'create table b (id int primary key);\ninsert into b values (1);'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations create tables the tests read untyped
const rows = async (d: Database, query: string) => (await sql.raw(query).execute(d.db as Kysely<any>)).rows

describe('migrator', () => {
  const opened: Database[] = []
  after(async () => {
    for (const d of opened) await d.close()
  })
  const open = async () => {
    const d = await freshDatabase('mig')
    opened.push(d)
    return d
  }

  it('applies pending files in order, once, recording a checksum for each', async () => {
    const d = await open()
    const dir = tempFolder({ '0002_b.sql': SECOND, '0001_a.sql': FIRST })
    assert.deepEqual(await migrate(d, dir), ['0001_a.sql', '0002_b.sql'])
    assert.deepEqual(await migrate(d, dir), [], 'a second run applies nothing')
    const applied = await rows(d, 'select name, length(checksum) as len from schema_migrations order by name')
    assert.deepEqual(applied, [
      { name: '0001_a.sql', len: 64 },
      { name: '0002_b.sql', len: 64 },
    ])
    writeFileSync(join(dir, '0003_c.sql'), 'alter table a add column note text;')
    assert.deepEqual(await migrate(d, dir), ['0003_c.sql'])
  })

  it('refuses to start when an applied migration was edited', async () => {
    const d = await open()
    const dir = tempFolder({ '0001_a.sql': FIRST })
    await migrate(d, dir)
    writeFileSync(join(dir, '0001_a.sql'), `${FIRST}\n-- edited`)
    await assert.rejects(migrate(d, dir), /0001_a\.sql was changed after it was applied/)
  })

  it('refuses a database holding a migration the code does not have', async () => {
    const d = await open()
    await migrate(d, tempFolder({ '0001_a.sql': FIRST, '0002_b.sql': SECOND }))
    await assert.rejects(migrate(d, tempFolder({ '0001_a.sql': FIRST })), /has migration 0002_b\.sql/)
  })

  it('rolls back a failing file whole and keeps the ones before it', async () => {
    const d = await open()
    const dir = tempFolder({
      '0001_a.sql': FIRST,
      '0002_b.sql':
        'create table b (id int primary key);\ninsert into b values (1);\nselect * from missing_table;',
    })
    await assert.rejects(migrate(d, dir), /missing_table/)
    assert.deepEqual(await rows(d, 'select name from schema_migrations'), [{ name: '0001_a.sql' }])
    assert.deepEqual(
      await rows(d, "select to_regclass('b')::text as b"),
      [{ b: null }],
      'no half-applied file',
    )
    writeFileSync(join(dir, '0002_b.sql'), SECOND)
    assert.deepEqual(await migrate(d, dir), ['0002_b.sql'])
  })

  it('rejects a migration file not named NNNN_name.sql', async () => {
    const d = await open()
    await assert.rejects(migrate(d, tempFolder({ 'init.sql': FIRST })), /must be named NNNN_name\.sql/)
  })

  it('applies each file once when two instances migrate at the same time', async () => {
    const d = await open()
    // a second handle on the same schema: another process on PostgreSQL, the same connection on PGlite
    const other = onPostgres ? await openDatabase({ url: process.env.DATABASE_URL, schema: d.schema }) : d
    if (other !== d) opened.unshift(other)
    const dir = tempFolder({ '0001_a.sql': FIRST, '0002_b.sql': SECOND })
    const [x, y] = await Promise.all([migrate(d, dir), migrate(other, dir)])
    assert.deepEqual([...x, ...y].sort(), ['0001_a.sql', '0002_b.sql'])
    assert.deepEqual(await rows(d, 'select count(*) as n from b'), [{ n: 1 }])
  })
})
