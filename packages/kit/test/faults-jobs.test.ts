import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type Database, openDatabase } from '../src/db/database.ts'
import { Jobs } from '../src/jobs.ts'
import { endpointOf, FaultProxy } from './fault-proxy.ts'

const databaseUrl = process.env.DATABASE_URL
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe(
  'jobs when the database is cut while jobs run',
  { skip: !databaseUrl && 'needs DATABASE_URL: an embedded PGlite cannot be cut' },
  () => {
    let proxy: FaultProxy
    let database: Database
    let jobs: Jobs
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => void unhandled.push(reason)
    before(async () => {
      process.on('unhandledRejection', onUnhandled)
      proxy = await FaultProxy.start(endpointOf(databaseUrl!))
      database = await openDatabase({
        url: proxy.url(databaseUrl!),
        schema: `t${randomBytes(5).toString('hex')}_faults`,
        dropSchemaOnClose: true,
        statementTimeoutMs: 1000,
        connectTimeoutMs: 1000,
      })
      jobs = await Jobs.start(database, { maintenanceIntervalSeconds: 1 })
    })
    after(async () => {
      proxy.set('pass')
      await jobs.stop()
      await database.close()
      await proxy.close()
      process.off('unhandledRejection', onUnhandled)
    })

    it('neither crashes nor loses a job: completions that could not be written are retried after the lease', async () => {
      await jobs.queue('cut', { retryLimit: 5, retryDelay: 1, retryBackoff: false, expireInSeconds: 3 })
      const runs = new Map<number, number>()
      await jobs.work<{ n: number }>(
        'cut',
        async ({ n }) => {
          runs.set(n, (runs.get(n) ?? 0) + 1)
          await sleep(500)
        },
        { pollingIntervalSeconds: 0.2, batchSize: 20 },
      )
      const ids = await database.db.transaction().execute(async (trx) => {
        const made: string[] = []
        for (let n = 0; n < 20; n++) made.push(await jobs.enqueue(trx, 'cut', { n }))
        return made
      })
      while (runs.size < 20) await sleep(20)
      proxy.set('refuse') // the handlers are running: their completions meet a refused database
      await sleep(1500)
      proxy.set('pass')

      const deadline = Date.now() + 20_000
      for (;;) {
        const states = await Promise.all(
          ids.map(async (id) => (await jobs.job('cut', id).catch(() => null))?.state),
        )
        if (states.every((s) => s === 'completed')) break
        if (Date.now() > deadline) throw new Error(`not all jobs completed: ${states.join(', ')}`)
        await sleep(200)
      }
      assert.deepEqual(unhandled, [], 'no promise of the jobs layer was left to reject unhandled')
      for (let n = 0; n < 20; n++) assert.ok((runs.get(n) ?? 0) >= 1, `job ${n} ran`)
    })
  },
)
