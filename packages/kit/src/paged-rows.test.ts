import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Database } from './db/database.ts'
import { migrate } from './db/migrator.ts'
import { countedPageOfRows, NEWEST_FIRST, OLDEST_FIRST, pageOfRows } from './paged-rows.ts'
import { freshDatabase, tempFolder } from './testing.ts'

interface Tables {
  items: { id: string; org_id: string; state: string; created_at: Date }
}

const SCHEMA = `create table items (
  id text primary key, org_id text not null, state text not null, created_at timestamptz not null
);`

describe('pageOfRows: the owner’s rows in one order, paged', () => {
  let database: Database<Tables>
  before(async () => {
    database = (await freshDatabase('paged')) as Database<Tables>
    await migrate(database, tempFolder({ '0001_items.sql': SCHEMA }))
    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute))
    await database.db
      .insertInto('items')
      .values([
        { id: 'a', org_id: 'o1', state: 'live', created_at: at(1) },
        { id: 'b', org_id: 'o1', state: 'live', created_at: at(2) },
        // a tie on created_at: the id orders them
        { id: 'c', org_id: 'o1', state: 'gone', created_at: at(2) },
        { id: 'd', org_id: 'o1', state: 'live', created_at: at(3) },
        { id: 'x', org_id: 'o2', state: 'live', created_at: at(4) },
      ])
      .execute()
  })
  after(async () => database.close())

  const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id)

  it('answers only the owner’s rows, newest first, ties by id, from the offset', async () => {
    const rows = { table: 'items', owner: ['org_id', 'o1'], order: NEWEST_FIRST } as const
    assert.deepEqual(ids(await pageOfRows(database.db, rows, { limit: 10, offset: 0 })), ['d', 'c', 'b', 'a'])
    assert.deepEqual(ids(await pageOfRows(database.db, rows, { limit: 2, offset: 1 })), ['c', 'b'])
    assert.deepEqual(ids(await pageOfRows(database.db, rows, { limit: 2, offset: 4 })), [])
  })

  it('narrows with `where`, and counts the narrowed rows in all', async () => {
    const page = await countedPageOfRows(
      database.db,
      {
        table: 'items',
        owner: ['org_id', 'o1'],
        where: (q) => q.where('state', '=', 'live'),
        order: OLDEST_FIRST,
      },
      { limit: 2, offset: 0 },
    )
    assert.deepEqual(ids(page.rows), ['a', 'b'])
    assert.equal(page.total, 3)
  })
})
