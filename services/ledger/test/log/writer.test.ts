import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type Database, Jobs, type RunningService, startService } from '@svc/kit'
import { ReceiptWriter } from '@svc/kit/receipts/writer'
import { freshDatabase, request, testEnv } from '@svc/kit/testing'
import { ledger } from '../../src/app.ts'
import type { LedgerConfig } from '../../src/config.ts'
import { newIssuer, WRITER, writerEnv } from '../support/helpers.ts'

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
    await jobs.stop()
    await database.close()
    await log.close()
  })

  it('delivers a receipt recorded in a committed transaction, and never one whose transaction rolled back', async () => {
    const kept = await database.db
      .transaction()
      .execute((trx) => writer.record(trx, { type: 'task.completed', subject: 'tsk_kept', data: { n: 1 } }))
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await writer.record(trx, { type: 'task.completed', subject: 'tsk_rolled_back' })
        throw new Error('abort')
      }),
      /abort/,
    )
    const auth = { authorization: `Bearer ${WRITER}` }
    const found = await until(async () => {
      const res = await request(`${log.url}/v1/receipts?subject=tsk_kept`, { headers: auth })
      const receipts = res.body.receipts as Array<{ leaf_hash: string }>
      return receipts.length ? receipts : undefined
    }, 'delivery')
    assert.equal(found[0]!.leaf_hash, kept.leafHash)
    await new Promise((r) => setTimeout(r, 1000))
    const rolledBack = await request(`${log.url}/v1/receipts?subject=tsk_rolled_back`, { headers: auth })
    assert.deepEqual(rolledBack.body.receipts, [])
    assert.deepEqual(await writer.reconcile(1), [], 'the ledger holds everything recorded')
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
