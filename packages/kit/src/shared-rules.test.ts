import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { generateEd25519 } from '@svc/trust/ed25519'
import { type Kysely, sql } from 'kysely'
import pino from 'pino'
import { DID_KEY_PATTERN, isEd25519DidKey } from './did.ts'
import type { Database } from './db/database.ts'
import { createHttpServer } from './http/server.ts'
import { type IdempotencyTables, idempotentWrite } from './idempotency.ts'
import { PageQuery, pageOf, pageQuery } from './page.ts'
import { rowById } from './rows.ts'
import { freshDatabase } from './testing.ts'

interface Tables extends IdempotencyTables {
  things: { id: string; owner: string; n: number }
}

describe('idempotent writes, owner-scoped rows', () => {
  let database: Database
  let db: Kysely<Tables>
  before(async () => {
    database = await freshDatabase('rules')
    db = database.db as unknown as Kysely<Tables>
    // the table as a service's migration makes it (the rental's 0011_engagements.sql)
    await sql`create table idempotent_answers (
      client_subject text not null,
      scope text not null,
      key text not null,
      request_digest text not null,
      status integer not null,
      body jsonb not null,
      created_at timestamptz not null default now(),
      primary key (client_subject, scope, key)
    )`.execute(db)
    await sql`create table things (id text primary key, owner text not null, n integer not null)`.execute(db)
  })
  after(() => database.close())

  const insert = (id: string, n: number) => async (trx: Kysely<Tables>) => {
    await trx.insertInto('things').values({ id, owner: 'alice', n }).execute()
    return { status: 201, body: { id, n } }
  }
  const count = async () =>
    Number(
      (
        await db
          .selectFrom('things')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )

  test('a replay answers the first answer (status and body) and writes nothing', async () => {
    const request = { owner: 'alice', scope: 'things', key: 'k1', request: { n: 1 } }
    const first = await idempotentWrite(db, request, insert('t1', 1))
    const again = await idempotentWrite(db, request, insert('t1-again', 1))
    assert.deepEqual(first, { status: 201, body: { id: 't1', n: 1 }, replayed: false })
    assert.deepEqual(again, { status: 201, body: { id: 't1', n: 1 }, replayed: true })
    assert.equal(await count(), 1)
  })

  test('the same key with another request is idempotency_key_reused (422 unless the route keeps its own)', async () => {
    const request = { owner: 'alice', scope: 'things', key: 'k2', request: { n: 2 } }
    await idempotentWrite(db, request, insert('t2', 2))
    await assert.rejects(idempotentWrite(db, { ...request, request: { n: 3 } }, insert('t3', 3)), {
      status: 422,
      code: 'idempotency_key_reused',
    })
    await assert.rejects(
      idempotentWrite(db, { ...request, request: { n: 3 }, reusedStatus: 409 }, insert('t3', 3)),
      { status: 409 },
    )
    // another owner's key of the same name is another key
    const bob = await idempotentWrite(db, { ...request, owner: 'bob', request: { n: 3 } }, insert('t3', 3))
    assert.equal(bob.replayed, false)
  })

  test('a failed write keeps no answer: the retry runs it', async () => {
    const request = { owner: 'alice', scope: 'things', key: 'k4', request: { n: 4 } }
    await assert.rejects(
      idempotentWrite(db, request, async () => {
        throw new Error('refused')
      }),
    )
    assert.equal((await idempotentWrite(db, request, insert('t4', 4))).replayed, false)
  })

  test('of two concurrent first requests with one key, both get the one committed answer', async () => {
    const request = { owner: 'alice', scope: 'race', key: 'k5', request: { n: 5 } }
    const slow = (id: string) => async (trx: Kysely<Tables>) => {
      await new Promise((r) => setTimeout(r, 20))
      return insert(id, 5)(trx)
    }
    const answers = await Promise.all([
      idempotentWrite(db, request, slow('r1')),
      idempotentWrite(db, request, slow('r2')),
    ])
    assert.equal(answers[0].body.id, answers[1].body.id)
    assert.equal((await db.selectFrom('things').selectAll().where('n', '=', 5).execute()).length, 1)
  })

  test('rowById finds a row only for its owner, and locks it in a transaction', async () => {
    await db.insertInto('things').values({ id: 'owned', owner: 'carol', n: 9 }).execute()
    assert.equal((await rowById(db, 'things', 'owned', { match: { owner: 'carol' } }))?.n, 9)
    assert.equal(await rowById(db, 'things', 'owned', { match: { owner: 'dave' } }), undefined)
    const locked = await db
      .transaction()
      .execute((trx) => rowById(trx, 'things', 'owned', { match: { owner: 'carol' }, lock: true }))
    assert.equal(locked?.id, 'owned')
  })
})

test('one page schema: limits and offsets are finite integers within bounds, or 400', async () => {
  const app = await createHttpServer({
    name: 'test',
    version: '0',
    description: 'pages',
    logger: pino({ level: 'silent' }),
    errorShape: 'api',
    checks: [],
  })
  app.get('/list', { schema: { querystring: PageQuery } }, async (request) => pageOf(request.query))
  app.get('/old', { schema: { querystring: pageQuery({ limitDefault: 20 }) } }, async (request) =>
    pageOf(request.query),
  )
  const get = (url: string) => app.inject({ method: 'GET', url })
  assert.deepEqual((await get('/list')).json(), { limit: 50, offset: 0 })
  assert.deepEqual((await get('/old')).json(), { limit: 20, offset: 0 })
  assert.deepEqual((await get('/list?limit=100&offset=1000000')).json(), { limit: 100, offset: 1000000 })
  for (const query of [
    'limit=1e309',
    'offset=1e309',
    'limit=-1e309',
    'limit=NaN',
    'limit=1.5',
    'limit=0',
    'limit=101',
  ])
    assert.equal((await get(`/list?${query}`)).statusCode, 400, query)
  await app.close()
})

test('one DID pattern: a did:key matches; isEd25519DidKey says which key', async () => {
  const did = didKeyFromEd25519(generateEd25519().publicKey)
  assert.match(did, new RegExp(DID_KEY_PATTERN))
  assert.doesNotMatch('did:web:example.com', new RegExp(DID_KEY_PATTERN))
  assert.equal(isEd25519DidKey(did), true)
  assert.equal(isEd25519DidKey('did:key:z6Mkfake'), false)
})
