import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { onPostgres } from '@svc/kit/testing'
import { endpointOf, FaultProxy } from '../../../../packages/kit/test/fault-proxy.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { allEndedAndReceipted, assertReceiptedOnce, postTask, sleep, untilStored } from './task-faults.ts'

const databaseUrl = process.env.DATABASE_URL

describe(
  'tasks while the rental’s database is black-holed',
  { skip: !onPostgres && 'needs DATABASE_URL: an embedded PGlite cannot be cut' },
  () => {
    let stack: FullStack
    let proxy: FaultProxy
    let engagement: string

    before(async () => {
      // the rental alone reaches PostgreSQL through the proxy; the other services directly
      proxy = await FaultProxy.start(endpointOf(databaseUrl!))
      stack = await startFullStack(
        {
          DATABASE_URL: proxy.url(databaseUrl!),
          RENTAL_TASK_TIMEOUT_MS: '5000',
          RENTAL_TASK_SWEEP_S: '1',
          RENTAL_TASK_RETRY_BASE_MS: '500',
          RENTAL_TASK_RETRY_CAP_MS: '5000',
        },
        // each agent takes 3 s: the cut comes while the agents work, their answers meet it
        { agentsEnv: { AGENTS_DELAY_MS: '3000' } },
      )
      const did = await stack.agentOf('job_summary')
      engagement = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
    })
    after(async () => {
      proxy?.set('pass')
      await stack?.close()
      await proxy?.close()
    })

    it('sync tasks cut mid-request end, receipted on the ledger, within 60 s of its return', async (t) => {
      const text = (i: number) => `Task ${i}, its database cut while the agent works. Each ends once.`
      const queued = await Promise.all(
        Array.from({ length: 4 }, (_, i) => postTask(stack, engagement, text(100 + i), true)),
      )
      for (const q of queued) assert.equal(q.status, 200, 'every async task is acknowledged before the cut')
      const sync = Array.from({ length: 12 }, (_, i) => postTask(stack, engagement, text(i), false))
      await untilStored(stack, 16)
      proxy.set('blackhole')
      await sleep(20_000)
      const answered = await Promise.all(sync)
      t.diagnostic(`sync answers during the cut: ${answered.map((a) => a.status).join(' ')}`)
      proxy.set('pass')
      const back = Date.now()
      const tasks = await allEndedAndReceipted(stack, 60_000)
      t.diagnostic(`every task ended and was receipted ${Date.now() - back} ms after the database came back`)

      assert.equal(tasks.length, 16, 'every task was stored before the cut')
      assert.deepEqual(
        tasks.filter((task) => task.state !== 'completed').map((task) => [task.id, task.state, task.error]),
        [],
      )
      assertReceiptedOnce(tasks)
      // the sync requests failed with the database; their tasks' runs were taken back once their lease passed
      const lapsed = tasks.filter((task) => task.runs?.some((r) => /within its lease/.test(r.error)))
      t.diagnostic(`${lapsed.length} tasks were taken back past their lease`)
      assert.ok(lapsed.length > 0, 'attempts the cut lost were taken back')
    })
  },
)
