import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { type Database, migrate } from '@svc/kit'
import { freshDatabase, onPostgres } from '@svc/kit/testing'
import type { Kysely } from 'kysely'
import pino from 'pino'
import { SYSTEM } from '../../src/areas/events/actor.ts'
import { EventLog, type EventView } from '../../src/areas/events/service.ts'
import { inTransaction, type RentalTables } from '../../src/db.ts'

const MIGRATIONS = fileURLToPath(new URL('../../migrations', import.meta.url))

describe('the event log: streams numbered in order, consumers given each committed event once, in commit order', () => {
  let database: Database
  let db: Kysely<RentalTables>
  let log: EventLog
  before(async () => {
    database = await freshDatabase('event_log')
    await migrate(database, MIGRATIONS)
    db = database.db as Kysely<RentalTables>
    log = new EventLog({ db, log: pino({ level: 'silent' }) })
  })
  after(async () => {
    await log?.stop()
    await database?.close()
  })

  it('numbers a stream 1, 2, 3… even when writers race, and reads it after the N-th', async () => {
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        inTransaction(db, (trx) =>
          log.record(trx, {
            orgId: 'org_a',
            type: 'task.trace',
            stream: 'tsk_race',
            actor: SYSTEM,
            data: { i },
          }),
        ),
      ),
    )
    const all = await log.stream('tsk_race', 0)
    assert.deepEqual(
      all.map((e) => e.stream_seq),
      Array.from({ length: 12 }, (_, i) => i + 1),
    )
    const later = await log.stream('tsk_race', 10)
    assert.deepEqual(
      later.map((e) => e.stream_seq),
      [11, 12],
    )
    assert.equal(later[0]!.id, `evt_${later[0]!.seq}`)
  })

  it('writes several events of one stream in one statement, numbered in the order given', async () => {
    await inTransaction(db, (trx) =>
      log.record(trx, {
        orgId: 'org_a',
        type: 'task.trace',
        stream: 'tsk_all',
        actor: SYSTEM,
        data: { n: 1 },
      }),
    )
    const written = await inTransaction(db, (trx) =>
      log.recordAll(trx, 'tsk_all', [
        { orgId: 'org_a', type: 'task.trace', actor: SYSTEM, data: { n: 2 } },
        { orgId: 'org_a', type: 'task.state_changed', actor: SYSTEM, data: { n: 3 } },
      ]),
    )
    assert.deepEqual(
      written.map((w) => w.streamSeq),
      [2, 3],
    )
    const all = await log.stream('tsk_all', 0)
    assert.deepEqual(
      all.map((e) => [e.stream_seq, e.type, (e.data as { n: number }).n]),
      [
        [1, 'task.trace', 1],
        [2, 'task.trace', 2],
        [3, 'task.state_changed', 3],
      ],
    )
    assert.ok(BigInt(all[1]!.seq) < BigInt(all[2]!.seq), 'the log keeps their order too')
    assert.deepEqual(
      written.map((w) => w.id),
      all.slice(1).map((e) => e.id),
    )
  })

  it('runs a paced consumer at most once per interval, with every event, the last ones when it falls due', async () => {
    const runs: string[][] = []
    const paced = new EventLog({ db, log: pino({ level: 'silent' }) })
    paced.consume(
      'test.paced',
      async (_trx, events) => {
        const mine = events.filter((e) => e.stream === 'tsk_paced').map((e) => e.type)
        if (mine.length) runs.push(mine)
      },
      { everyMs: 700 },
    )
    try {
      for (const type of ['task.trace', 'task.created', 'task.state_changed'] as const) {
        await inTransaction(db, (trx) =>
          paced.record(trx, { orgId: 'org_a', type, stream: 'tsk_paced', actor: SYSTEM }),
        )
        await new Promise((r) => setTimeout(r, 150))
      }
      const deadline = Date.now() + 15_000
      while (runs.flat().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      assert.deepEqual(
        runs.flat(),
        ['task.trace', 'task.created', 'task.state_changed'],
        'each event once, in order',
      )
      assert.ok(runs.length < 3, `events 150 ms apart are taken in fewer runs than events (${runs.length})`)
    } finally {
      await paced.stop()
    }
  })

  it('an event of a rolled-back transaction is never written nor numbered', async () => {
    await assert.rejects(
      inTransaction(db, async (trx) => {
        await log.record(trx, { orgId: 'org_a', type: 'task.trace', stream: 'tsk_rb', actor: SYSTEM })
        throw new Error('rolled back')
      }),
    )
    await inTransaction(db, (trx) =>
      log.record(trx, { orgId: 'org_a', type: 'task.trace', stream: 'tsk_rb', actor: SYSTEM }),
    )
    assert.deepEqual(
      (await log.stream('tsk_rb', 0)).map((e) => e.stream_seq),
      [1],
    )
  })

  it('wakes a stream reader when an event of its stream commits', async () => {
    const started = Date.now()
    const waiting = log.waitFor('tsk_wake', 5_000)
    await inTransaction(db, (trx) =>
      log.record(trx, { orgId: null, type: 'task.trace', stream: 'tsk_wake', actor: SYSTEM }),
    )
    await waiting
    assert.ok(Date.now() - started < 4_000, 'woken by the commit, not by the timeout')
  })

  it(
    'gives a consumer every event once, after every older transaction settled',
    { skip: !onPostgres && 'needs two connections (PostgreSQL)' },
    async () => {
      const seen: EventView[] = []
      // a consumer of its own, without its loop: drained by hand
      const consumerLog = new EventLog({ db, log: pino({ level: 'silent' }) }, { manual: true })
      consumerLog.consume('test.order', async (_trx, events) => {
        seen.push(...events.filter((e) => e.type.startsWith('member.')))
      })
      await consumerLog.drain()
      seen.length = 0
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      let recorded!: () => void
      const written = new Promise<void>((resolve) => (recorded = resolve))
      // an older transaction writes first and commits last
      const slow = inTransaction(db, async (trx) => {
        await log.record(trx, { orgId: 'org_a', type: 'member.invited', actor: SYSTEM })
        recorded()
        await held
      })
      await written
      await inTransaction(db, (trx) =>
        log.record(trx, { orgId: 'org_a', type: 'member.removed', actor: SYSTEM }),
      )
      await consumerLog.drain()
      assert.equal(
        seen.length,
        0,
        'nothing is given while an older transaction may still add an event before it',
      )
      release()
      await slow
      // other test files' transactions share the cluster's horizon: they may hold it a moment longer
      const deadline = Date.now() + 15_000
      while (seen.length < 2 && Date.now() < deadline) {
        await consumerLog.drain()
        if (seen.length < 2) await new Promise((r) => setTimeout(r, 50))
      }
      assert.deepEqual(
        seen.map((e) => e.type),
        ['member.invited', 'member.removed'],
      )
      await consumerLog.drain()
      assert.equal(seen.length, 2, 'given once')
      await consumerLog.stop()
    },
  )
})
