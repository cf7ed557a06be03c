import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Database } from './db/database.ts'
import { Jobs } from './jobs.ts'
import { freshDatabase } from './testing.ts'

const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('jobs', () => {
  let database: Database
  let jobs: Jobs
  before(async () => {
    database = await freshDatabase('jobs')
    jobs = await Jobs.start(database)
  })
  after(async () => {
    await jobs.stop()
    await database.close()
  })

  it('runs a job enqueued in a committed transaction, and never one whose transaction rolled back', async () => {
    await jobs.queue('deliver')
    const seen: string[] = []
    await jobs.work<{ note: string }>(
      'deliver',
      async (data) => {
        seen.push(data.note)
      },
      { pollingIntervalSeconds: 0.5 },
    )
    await database.db.transaction().execute(async (trx) => {
      await jobs.enqueue(trx, 'deliver', { note: 'committed' })
    })
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await jobs.enqueue(trx, 'deliver', { note: 'rolled back' })
        throw new Error('abort')
      }),
      /abort/,
    )
    await database.db.transaction().execute(async (trx) => {
      await jobs.enqueue(trx, 'deliver', { note: 'second' })
    })
    await waitFor(() => seen.includes('second'))
    await new Promise((r) => setTimeout(r, 1200))
    assert.deepEqual(seen.sort(), ['committed', 'second'])
  })

  it('retries a failing job with backoff until it succeeds', async () => {
    await jobs.queue('flaky', { retryLimit: 3, retryDelay: 1, retryBackoff: true })
    const attempts: number[] = []
    await jobs.work(
      'flaky',
      async (_data, job) => {
        attempts.push(job.retryCount ?? -1)
        if (attempts.length < 3) throw new Error(`attempt ${attempts.length} fails`)
      },
      { pollingIntervalSeconds: 0.5 },
    )
    const id = await jobs.enqueue(database.db, 'flaky', {})
    await waitFor(async () => (await jobs.job('flaky', id))?.state === 'completed')
    assert.deepEqual(attempts, [0, 1, 2], 'each retry is a new attempt with its count')
  })

  it('marks a job failed once its retries are spent, keeping the last error', async () => {
    await jobs.queue('doomed', { retryLimit: 1, retryDelay: 1, retryBackoff: false })
    let attempts = 0
    await jobs.work(
      'doomed',
      async () => {
        attempts++
        throw new Error('always fails')
      },
      { pollingIntervalSeconds: 0.5 },
    )
    const id = await jobs.enqueue(database.db, 'doomed', {})
    await waitFor(async () => (await jobs.job('doomed', id))?.state === 'failed')
    const job = await jobs.job('doomed', id)
    assert.equal(attempts, 2)
    assert.match(JSON.stringify(job?.output), /always fails/)
  })

  it('takes a batch per fetch: each job completes or fails on its own, and a failed one is retried alone', async () => {
    await jobs.queue('batch', { retryLimit: 2, retryDelay: 1, retryBackoff: false })
    const runs = new Map<number, number>()
    await jobs.work<{ n: number }>(
      'batch',
      async ({ n }) => {
        runs.set(n, (runs.get(n) ?? 0) + 1)
        if (n % 3 === 0 && runs.get(n) === 1) throw new Error(`job ${n} fails once`)
      },
      { pollingIntervalSeconds: 0.5, batchSize: 10 },
    )
    const ids = await database.db.transaction().execute(async (trx) => {
      const made: string[] = []
      for (let n = 1; n <= 10; n++) made.push(await jobs.enqueue(trx, 'batch', { n }))
      return made
    })
    await waitFor(async () => {
      const states = await Promise.all(ids.map(async (id) => (await jobs.job('batch', id))?.state))
      return states.every((state) => state === 'completed')
    })
    for (let n = 1; n <= 10; n++) assert.equal(runs.get(n), n % 3 === 0 ? 2 : 1, `job ${n}`)
  })

  it('refuses to enqueue on an undeclared queue', async () => {
    await assert.rejects(jobs.enqueue(database.db, 'nowhere', {}), /queue nowhere was not declared/)
  })
})

describe('jobs at rest', () => {
  // the watch rests after half a second without work here, and then looks only once a minute
  let database: Database
  let jobs: Jobs
  const ran = new Map<string, number>()
  before(async () => {
    database = await freshDatabase('jobs_rest')
    jobs = await Jobs.start(database, { watch: { busyForMs: 500, restMs: 60_000 } })
    await jobs.queue('later')
    await jobs.work<{ note: string }>('later', async (data) => void ran.set(data.note, Date.now()), {
      pollingIntervalSeconds: 0.2,
    })
  })
  after(async () => {
    await jobs.stop()
    await database.close()
  })
  const resting = () => new Promise((r) => setTimeout(r, 1500))

  it('runs a delayed job when it falls due, though the watch rests in between', async () => {
    const sent = Date.now()
    await jobs.enqueue(database.db, 'later', { note: 'delayed' }, { startAfter: 2.5 })
    await waitFor(() => ran.has('delayed'), 8000)
    const after = ran.get('delayed')! - sent
    assert.ok(after >= 2400 && after < 4500, `ran ${after} ms after it was sent, due at 2500`)
  })

  it('a job enqueued while the watch rests runs within its polling interval once committed, however the transaction was opened', async () => {
    await resting()
    const sent = Date.now()
    await database.db.transaction().execute(async (trx) => {
      await jobs.enqueue(trx, 'later', { note: 'plain transaction' })
      // committed a moment after the enqueue: the watch's first look does not see it yet
      await new Promise((r) => setTimeout(r, 300))
    })
    await waitFor(() => ran.has('plain transaction'), 5000)
    assert.ok(ran.get('plain transaction')! - sent < 2000)
  })

  it('a job another process enqueues at rest waits for the resting look (or a wake), and is not lost', async () => {
    await resting()
    // another process's enqueue: the same database, not this Jobs
    const other = await Jobs.start(database)
    await other.queue('later')
    await other.enqueue(database.db, 'later', { note: 'from elsewhere' })
    await other.stop()
    await new Promise((r) => setTimeout(r, 1500))
    assert.equal(ran.has('from elsewhere'), false, 'a resting watch does not poll every interval')
    jobs.wake('later')
    await waitFor(() => ran.has('from elsewhere'), 5000)
  })
})
