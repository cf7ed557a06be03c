import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { startService } from '@svc/kit'
import { onPostgres } from '@svc/kit/testing'
import { rental } from '../../src/app.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import {
  allEndedAndReceipted,
  allTasks,
  assertOneReceiptWritten,
  assertReceiptedOnce,
  callAt,
  type FaultTask,
  freePort,
  launchRental,
  postTask,
  rentalReady,
  sleep,
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
      const first = await launchRental(stack, children)
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

    it('POST /api/tasks/{id}/retry of a sync task whose instance was killed: 409 while its heartbeat is fresh, then 200; it completes once', async () => {
      await stack.rental.close()
      // the killed instance heartbeats every second: stale 3 s after the kill
      const doomed = await launchRental(stack, children, { RENTAL_TASK_SWEEP_S: '1' })
      await rentalReady(stack)
      // the instance retried through: its sweep (at its start, then every 300 s) takes nothing back itself
      const other = await startService(rental, {
        ...stack.rentalEnv,
        RENTAL_PORT: String(await freePort()),
        RENTAL_TASK_SWEEP_S: '300',
      })
      try {
        const before = (await allTasks(stack)).length
        const cut = postTask(
          stack,
          engagement,
          'A sync task whose instance is killed. Its retry runs it.',
          false,
        )
        await untilStored(stack, before + 1)
        const id = (await allTasks(stack))[0]!.id
        doomed.child.kill('SIGKILL')
        await doomed.exited
        assert.equal((await cut).status, 0, 'the request was cut by the kill')
        const refusals = new Set<string>()
        let retried: Awaited<ReturnType<typeof callAt>> | undefined
        for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(250)) {
          const answer = await callAt(stack, other.url, 'POST', `/api/tasks/${id}/retry`)
          if (answer.status === 200) {
            retried = answer
            break
          }
          assert.equal(answer.status, 409, answer.text)
          refusals.add((answer.body.error as { code: string }).code)
        }
        assert.ok(retried, 'the retry was answered 200 once the instance was stale')
        assert.deepEqual([...refusals], refusals.size ? ['task_not_retryable'] : [])
        const taken = retried.body as unknown as FaultTask
        assert.equal(taken.id, id)
        assert.ok(['submitted', 'working'].includes(taken.state), taken.state)
        assert.match(taken.runs?.[0]?.error ?? '', /instance running this attempt stopped/)
        let task = taken
        for (const deadline = Date.now() + 30_000; task.state !== 'completed' && Date.now() < deadline;) {
          await sleep(250)
          task = (await callAt(stack, other.url, 'GET', `/api/tasks/${id}`)).body as unknown as FaultTask
        }
        assert.equal(task.state, 'completed', JSON.stringify(task))
        assert.equal(task.runs?.length, 1, 'one failed attempt: the cut one')
        // a second retry of the completed task changes nothing
        assert.equal((await callAt(stack, other.url, 'POST', `/api/tasks/${id}/retry`)).status, 409)
      } finally {
        await other.close()
      }
      await stack.restartRental()
      const tasks = await allEndedAndReceipted(stack, 30_000)
      assertReceiptedOnce(tasks)
      await assertOneReceiptWritten(stack, tasks)
    })

    it('a killed instance not restarted: another instance takes back its tasks once its heartbeat is stale; each ends with one receipt within 60 s', async (t) => {
      // the stack's rental stays up (sweeping every 5 s); the doomed instance heartbeats every 5 s too
      const port = await freePort()
      const doomed = await launchRental(stack, children, { RENTAL_PORT: String(port) })
      const url = `http://127.0.0.1:${port}`
      await rentalReady(stack, url)
      const before = (await allTasks(stack)).length
      const text = (i: number) => `Task ${i} on an instance killed for good. Another instance ends it.`
      const queued = await Promise.all(
        Array.from({ length: 6 }, (_, i) => postTask(stack, engagement, text(200 + i), true, url)),
      )
      for (const q of queued) assert.equal(q.status, 200, 'every async task is acknowledged before the kill')
      const sync = Array.from({ length: 6 }, (_, i) => postTask(stack, engagement, text(300 + i), false, url))
      await untilStored(stack, before + 12)
      doomed.child.kill('SIGKILL')
      await doomed.exited
      const killed = Date.now()
      await Promise.all(sync)
      const tasks = await allEndedAndReceipted(stack, 60_000)
      t.diagnostic(`every task ended and was receipted ${Date.now() - killed} ms after the kill`)
      const ours = tasks.slice(0, tasks.length - before)
      assert.equal(ours.length, 12)
      assert.deepEqual(
        ours.filter((task) => task.state !== 'completed').map((task) => [task.id, task.state, task.error]),
        [],
      )
      assertReceiptedOnce(tasks)
      await assertOneReceiptWritten(stack, ours)
      const cut = ours.filter((task) =>
        task.runs?.some((r) => /instance running this attempt stopped/.test(r.error)),
      )
      t.diagnostic(`${cut.length} of 12 tasks had an attempt cut by the kill`)
      assert.ok(cut.length > 0, 'the kill cut running attempts, taken back by the other instance')
    })
  },
)
