import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { startService } from '@svc/kit'
import { onPostgres } from '@svc/kit/testing'
import { rental } from '../src/app.ts'
import { type FullStack, startFullStack } from './full-stack.ts'
import {
  allEndedAndReceipted,
  allTasks,
  assertReceiptedOnce,
  freePort,
  launchRental,
  postTask,
  rentalReady,
  untilStored,
} from './task-faults.ts'

// a kill -9 needs the rental in a process of its own on storage that outlives it: an embedded
// database would be a second cold start of PGlite per run for the same fault, so PostgreSQL only
describe(
  'tasks across a kill -9 of the rental',
  { skip: !onPostgres && 'needs DATABASE_URL: the killed process and its restart share a PostgreSQL schema' },
  () => {
    let stack: FullStack
    let engagement: string
    const children: ChildProcess[] = []

    before(async () => {
      stack = await startFullStack(
        {
          RENTAL_TASK_TIMEOUT_MS: '5000',
          RENTAL_TASK_RETRY_BASE_MS: '500',
          RENTAL_TASK_RETRY_CAP_MS: '5000',
        },
        // each agent takes 3 s: the kill finds sync requests waiting and async runs at the agent
        { restartable: true, agentsEnv: { AGENTS_DELAY_MS: '3000' } },
      )
      const did = await stack.agentOf('job_summary')
      engagement = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
    })
    after(async () => {
      for (const child of children) child.kill('SIGKILL')
      await stack.close()
    })

    it('every stored task ends, and every completed one is on the ledger, within 60 s of the restart', async (t) => {
      await stack.rental.close()
      const first = launchRental(stack, children)
      await rentalReady(stack)
      const text = (i: number) => `Task ${i} of a burst cut by a kill. The ledger keeps every receipt once.`
      const queued = await Promise.all(
        Array.from({ length: 16 }, (_, i) => postTask(stack, engagement, text(100 + i), true)),
      )
      for (const q of queued) assert.equal(q.status, 200, 'every async task is acknowledged before the kill')
      const sync = Array.from({ length: 16 }, (_, i) => postTask(stack, engagement, text(i), false))
      // every task stored: the sync requests wait for the agent, the async runs are at it or queued
      await untilStored(stack, 32)
      first.child.kill('SIGKILL')
      await first.exited
      const answered = await Promise.all(sync)
      const acknowledged = [...queued, ...answered].filter((a) => a.status === 200).map((a) => a.id!)
      t.diagnostic(
        `${answered.filter((a) => a.status === 200).length} of 16 sync tasks answered before the kill`,
      )

      const restarted = Date.now()
      await stack.restartRental()
      const tasks = await allEndedAndReceipted(stack, 60_000 - (Date.now() - restarted))
      t.diagnostic(`every task ended and was receipted ${Date.now() - restarted} ms after the restart began`)

      for (const id of acknowledged)
        assert.ok(
          tasks.some((task) => task.id === id),
          `the acknowledged task ${id} is stored`,
        )
      // the agent is up: every task completes, each receipted once
      assert.deepEqual(
        tasks.filter((task) => task.state !== 'completed').map((task) => [task.id, task.state, task.error]),
        [],
      )
      assertReceiptedOnce(tasks)
      // the kill cut attempts, and the restarted instance took them back as new ones
      const cut = tasks.filter((task) =>
        task.runs?.some((r) => /instance running this attempt stopped/.test(r.error)),
      )
      t.diagnostic(`${cut.length} tasks had an attempt cut by the kill`)
      assert.ok(cut.length > 0, 'the kill cut running attempts')
      assert.ok(
        cut.some((task) => queued.every((q) => q.id !== task.id)),
        'a sync task is among them',
      )
    })

    it('a live instance’s running sync tasks are not taken by another instance sweeping every second', async () => {
      // a second instance on the same schema, its period 1 s where the first heartbeats every 5 s
      const second = await startService(rental, {
        ...stack.rentalEnv,
        RENTAL_PORT: String(await freePort()),
        RENTAL_TASK_SWEEP_S: '1',
      })
      try {
        const before = (await allTasks(stack)).length
        const requests = Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            stack.call(stack.alice, 'POST', '/api/tasks', {
              engagement_id: engagement,
              text: `Task ${i} on the first instance while the second sweeps. It completes in its request.`,
            }),
          ),
        )
        await untilStored(stack, before + 6)
        // nor does a retry through the second instance take one: its run holds its lease
        const running = (await allTasks(stack)).find((task) => task.state === 'working')!
        const retry = await stack.alice.jar.fetch(`${second.url}/api/tasks/${running.id}/retry`, {
          method: 'POST',
          headers: { 'x-csrf-token': stack.alice.csrf },
        })
        const refused = (await retry.json()) as { error: { code: string; message: string } }
        assert.equal(retry.status, 409, JSON.stringify(refused))
        assert.equal(refused.error.code, 'task_not_retryable')
        assert.match(refused.error.message, /is working: its run holds its lease until/)
        const answers = await requests
        for (const answer of answers) {
          assert.equal(answer.status, 200, answer.text)
          const task = answer.body.task as { state: string; async: boolean; runs: unknown }
          assert.deepEqual([task.state, task.async, task.runs], ['completed', false, null])
        }
      } finally {
        await second.close()
      }
    })
  },
)
