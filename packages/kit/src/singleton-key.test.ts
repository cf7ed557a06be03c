import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { ed25519FromSeed } from '@svc/trust/ed25519'
import { sql } from 'kysely'
import type { Database } from './db/database.ts'
import { Sealer } from './sealing.ts'
import { singletonDidKey, singletonKey } from './singleton-key.ts'
import { freshDatabase } from './testing.ts'

describe('singletonKey', () => {
  let database: Database
  const sealer = new Sealer(randomBytes(32))
  before(async () => {
    database = await freshDatabase('singleton')
    await sql`CREATE TABLE identity (id int PRIMARY KEY, did text NOT NULL, seed_sealed bytea NOT NULL, extra_sealed bytea)`.execute(
      database.db,
    )
  })
  after(() => database.close())

  it('makes one did:key for instances starting together, and the same one ever after', async () => {
    const spec = { table: 'identity', context: 'test-identity' }
    const together = await Promise.all([1, 2, 3, 4].map(() => singletonDidKey(database.db, sealer, spec)))
    const first = together[0]!
    for (const other of together) assert.deepEqual(other, first)
    assert.equal(first.did, didKeyFromEd25519(ed25519FromSeed(first.seed).publicKey))
    assert.deepEqual(await singletonDidKey(database.db, sealer, spec), first)
    const rows = await database.db.selectFrom('identity').selectAll().execute()
    assert.equal(rows.length, 1)
  })

  it('fills a further key column of the row once', async () => {
    const spec = { table: 'identity', column: 'extra_sealed', context: 'test-extra' }
    const together = await Promise.all([1, 2, 3].map(() => singletonKey(database.db, sealer, spec)))
    for (const other of together) assert.deepEqual(other, together[0])
    assert.equal(together[0]!.length, 32)
    assert.deepEqual(await singletonKey(database.db, sealer, spec), together[0])
  })

  it('refuses a key sealed for another context, and a did that does not match its key', async () => {
    await assert.rejects(
      singletonKey(database.db, sealer, { table: 'identity', column: 'extra_sealed', context: 'other' }),
    )
    await database.db.updateTable('identity').set({ did: 'did:key:z6Mkforged' }).execute()
    await assert.rejects(
      singletonDidKey(database.db, sealer, { table: 'identity', context: 'test-identity' }),
      /does not match/,
    )
  })

  it('needs the row before filling a further column', async () => {
    await sql`CREATE TABLE empty_identity (id int PRIMARY KEY, seed_sealed bytea)`.execute(database.db)
    await assert.rejects(
      singletonKey(database.db, sealer, { table: 'empty_identity', column: 'seed_sealed', context: 'x' }),
      /no row id = 1/,
    )
  })
})
