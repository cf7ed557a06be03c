import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { type Database, inTransaction, Jobs, jobsSchema, type RunningService, startService } from '@svc/kit'
import { insertOutbox } from '@svc/kit/receipts/outbox-store'
import { ReceiptWriter } from '@svc/kit/receipts/writer'
import { freshDatabase, request, testEnv } from '@svc/kit/testing'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash } from '@svc/trust/merkle'
import { ledger } from '../../src/app.ts'
import type { LedgerConfig } from '../../src/config.ts'
import { newIssuer, signedReceipt, WRITER, writerEnv } from '../support/helpers.ts'

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('receipt writer (outbox, delivery, reconcile)', () => {
  let log: RunningService<LedgerConfig>
  let database: Database
  let jobs: Jobs
  let writer: ReceiptWriter
  const issuer = newIssuer()

  before(async () => {
    log = await startService(ledger, testEnv(writerEnv), { fresh: true })
    database = await freshDatabase('writer')
    jobs = await Jobs.start(database)
    writer = new ReceiptWriter({
      db: database.db,
      jobs,
      ledgerUrl: log.url,
      token: WRITER,
      issuer: { did: issuer.did, seed: issuer.keys.seed },
    })
    await writer.start()
  })
  after(async () => {
    await writer.stop()
    await jobs.stop()
    await database.close()
    await log.close()
  })

  const auth = { authorization: `Bearer ${WRITER}` }
  const onLedger = (subject: string) =>
    until(async () => {
      const res = await request(`${log.url}/v1/receipts?subject=${subject}`, { headers: auth })
      const receipts = res.body.receipts as Array<{ leaf_hash: string }>
      return receipts.length ? receipts : undefined
    }, `the delivery of ${subject}`)
  const jobsFor = async (receiptId: string) =>
    (
      await sql<{
        n: string | number
      }>`select count(*) as n from ${sql.table(`${jobsSchema(database.schema)}.job`)}
        where name = 'receipts.deliver' and data->>'id' = ${receiptId}`.execute(database.db)
    ).rows[0]!.n

  it('delivers a receipt recorded in a committed transaction, and never one whose transaction rolled back', async () => {
    // inTransaction's commit delivers it directly: no job; a transaction opened elsewhere enqueues one
    const direct = await inTransaction(database.db, (trx) =>
      writer.record(trx, { type: 'task.completed', subject: 'tsk_direct', data: { n: 1 } }),
    )
    const kept = await database.db
      .transaction()
      .execute((trx) => writer.record(trx, { type: 'task.completed', subject: 'tsk_kept', data: { n: 2 } }))
    for (const open of [
      inTransaction,
      (db: typeof database.db, work: never) => db.transaction().execute(work),
    ])
      await assert.rejects(
        open(database.db, (async (trx: typeof database.db) => {
          await writer.record(trx, { type: 'task.completed', subject: 'tsk_rolled_back' })
          throw new Error('abort')
        }) as never),
        /abort/,
      )
    assert.equal((await onLedger('tsk_direct'))[0]!.leaf_hash, direct.leafHash)
    assert.equal((await onLedger('tsk_kept'))[0]!.leaf_hash, kept.leafHash)
    assert.equal(Number(await jobsFor(direct.id)), 0, 'a direct delivery enqueues no job')
    assert.equal(Number(await jobsFor(kept.id)), 1)
    await new Promise((r) => setTimeout(r, 1000))
    const rolledBack = await request(`${log.url}/v1/receipts?subject=tsk_rolled_back`, { headers: auth })
    assert.deepEqual(rolledBack.body.receipts, [])
    assert.deepEqual(await writer.reconcile(1), [], 'the ledger holds everything recorded')
  })

  it('sends the receipts of transactions committed together at once, so the ledger integrates them in a few batches, not one each', async () => {
    const batches = async () => {
      const text = await (await fetch(`${log.url}/metrics`)).text()
      return Number(/^ledger_batch_size_count(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1])
    }
    const before = await batches()
    const subjects = Array.from({ length: 12 }, (_, i) => `tsk_together_${i}`)
    // twelve transactions, each committing on its own, within a moment
    await Promise.all(
      subjects.map((subject) =>
        inTransaction(database.db, (trx) => writer.record(trx, { type: 'task.completed', subject })),
      ),
    )
    for (const subject of subjects) await onLedger(subject)
    const used = (await batches()) - before
    // commits spread over more than one 20 ms gathering on a loaded machine: a few batches, never one each
    assert.ok(used >= 1 && used <= 6, `12 receipts committed together took ${used} ledger batches`)
  })

  it('two instances sweeping at once deliver each receipt a killed process left, once', async () => {
    // what a process killed between its commit and its delivery leaves: rows nobody attempted
    const left = Array.from({ length: 30 }, (_, i) => {
      const envelope = signedReceipt(issuer, `tsk_left_${i}`)
      return {
        id: `rcp_left_${i}`,
        receipt_type: 'task.completed',
        subject: `tsk_left_${i}`,
        envelope,
        leaf_hash: Buffer.from(leafHash(canonicalBytes(envelope))),
      }
    })
    const sweepers = [0, 1].map(
      () =>
        new ReceiptWriter({
          db: database.db,
          jobs,
          ledgerUrl: log.url,
          token: WRITER,
          issuer: { did: issuer.did, seed: issuer.keys.seed },
          sweep: { everyMs: 50, afterS: 0 },
        }),
    )
    try {
      await Promise.all(sweepers.map((s) => s.start()))
      for (const row of left) await insertOutbox(database.db, row)
      const rows = await until(async () => {
        const rows = await database.db
          .selectFrom('receipt_outbox')
          .select(['id', 'attempts', 'ledger_index'])
          .where(
            'id',
            'in',
            left.map((l) => l.id),
          )
          .execute()
        return rows.every((r) => r.ledger_index !== null) ? rows : undefined
      }, 'the sweeps')
      // each marked delivered once: a second delivery would have counted a second attempt
      assert.deepEqual(
        rows.filter((r) => Number(r.attempts) !== 1),
        [],
      )
      for (const row of left) assert.equal((await onLedger(row.subject)).length, 1)
    } finally {
      await Promise.all(sweepers.map((s) => s.stop()))
    }
  })

  it('reports receipts the ledger refused, with the reason', async () => {
    const refusing = new ReceiptWriter({
      db: database.db,
      jobs,
      ledgerUrl: log.url,
      token: 'a-token-the-ledger-does-not-know',
      issuer: { did: issuer.did, seed: issuer.keys.seed },
    })
    const { id } = await refusing.record(database.db, { type: 'task.completed', subject: 'tsk_refused' })
    await refusing.deliver(id)
    const report = await writer.reconcile(1)
    const entry = report.find((d) => d.id === id)
    assert.equal(entry?.reason, 'rejected')
    assert.match(entry!.detail, /401 unauthorized/)
  })

  it('reports receipts a ledger does not hold, and an unreachable ledger', async () => {
    const other = await startService(ledger, testEnv(writerEnv), { fresh: true })
    const elsewhere = new ReceiptWriter({
      db: database.db,
      jobs,
      ledgerUrl: other.url,
      token: WRITER,
      issuer: { did: issuer.did, seed: issuer.keys.seed },
    })
    const reasons = new Set((await elsewhere.reconcile(1)).map((d) => d.reason))
    assert.ok(reasons.has('missing_on_ledger') || reasons.has('leaf_mismatch'), [...reasons].join())
    await other.close()
    const unreachable = (await elsewhere.reconcile(1)).filter((d) => d.reason === 'ledger_unreachable')
    assert.ok(unreachable.length > 0)
  })
})
