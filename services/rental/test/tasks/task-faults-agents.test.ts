import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import {
  allEndedAndReceipted,
  allTasks,
  assertReceiptedOnce,
  postTask,
  sleep,
  untilStored,
} from './task-faults.ts'

/**
 * The agents' outage: a full minute, as in the finding. The backoff is scaled down (5 s cap
 * instead of 5 min, 60 retries instead of 10) so that the tasks are tried again within seconds
 * of the agents' return rather than minutes; the defaults spread 10 retries over about 12 minutes.
 */
const OUTAGE_MS = 60_000

describe('tasks while the agents are down for a minute', () => {
  let stack: FullStack
  let engagement: string

  before(async () => {
    stack = await startFullStack(
      {
        RENTAL_TASK_TIMEOUT_MS: '5000',
        RENTAL_TASK_RETRIES: '60',
        RENTAL_TASK_RETRY_BASE_MS: '500',
        RENTAL_TASK_RETRY_CAP_MS: '5000',
      },
      // each agent takes 3 s, so that the stop finds tasks at the agent; in-flight calls are cut at once
      { agentsRestartable: true, agentsEnv: { AGENTS_DELAY_MS: '3000', SHUTDOWN_GRACE_MS: '0' } },
    )
    const did = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
  })
  after(async () => stack.close())

  it('the tasks in flight wait, working and saying when they try again, and complete once the agents are back', async (t) => {
    const text = (i: number) => `Task ${i}, its agent gone for a minute. It completes when the agent returns.`
    const queued = await Promise.all(
      Array.from({ length: 8 }, (_, i) => postTask(stack, engagement, text(100 + i), true)),
    )
    for (const q of queued) assert.equal(q.status, 200)
    const sync = Array.from({ length: 8 }, (_, i) => postTask(stack, engagement, text(i), false))
    await untilStored(stack, 16)
    await stack.stopAgents()
    const stopped = Date.now()
    for (const answer of await Promise.all(sync)) assert.equal(answer.status, 200)

    // well into the outage: nothing failed, and a task waiting for its next attempt says when
    await sleep(OUTAGE_MS / 2)
    const waiting = await allTasks(stack)
    assert.equal(waiting.length, 16)
    assert.deepEqual(
      waiting
        .filter((task) => !['working', 'submitted', 'completed'].includes(task.state))
        .map((task) => task.state),
      [],
    )
    const open = waiting.filter((task) => task.state !== 'completed')
    assert.ok(open.length >= 8, `the agents stopped with tasks in flight (${open.length})`)
    const told = waiting.filter((task) => /trying again at \d\d:\d\d:\d\d UTC/.test(task.message ?? ''))
    t.diagnostic(`${told.length} of ${open.length} tasks wait for a retry: ${told[0]?.message}`)
    assert.ok(told.length > 0, 'a task waiting for its retry says so')
    assert.ok(told.every((task) => task.state === 'working'))

    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - stopped)))
    await stack.startAgents()
    const back = Date.now()
    const tasks = await allEndedAndReceipted(stack, 60_000)
    t.diagnostic(
      `the agents were down ${back - stopped} ms; every task completed ${Date.now() - back} ms after`,
    )
    assert.deepEqual(
      tasks.filter((task) => task.state !== 'completed').map((task) => [task.id, task.state, task.error]),
      [],
    )
    assertReceiptedOnce(tasks)
    assert.ok(
      tasks.filter((task) => (task.runs?.length ?? 0) > 1).length > 0,
      'the tasks were tried several times during the outage',
    )
  })
})
