import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { sql } from 'kysely'
import { agents } from '../../../agents/src/app.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

interface TaskAnswer {
  id: string
  state: string
  error: string | null
  escrow_id: string | null
  receipt: { id: string } | null
}
interface RunAnswer {
  attempt: number
  started_at: string | null
  ended_at: string | null
  outcome: string
  error: string | null
  agent_did: string
}

describe('task operations: cancel, runs, retry', () => {
  let stack: FullStack
  let engagement: string
  let did: string
  let agentsAgain: RunningService<unknown> | undefined
  const TEXT = 'Operations on a task: cancel it while it runs, list its attempts, retry it once it failed.'

  const task = async (id: string) =>
    (await stack.call(stack.alice, 'GET', `/api/tasks/${id}`)).body as unknown as TaskAnswer
  const settled = async (id: string, state: string) => {
    await eventually(`task ${id} is ${state}`, async () => (await task(id)).state === state)
    return task(id)
  }
  const post = async (async: boolean) => {
    const res = await stack.call(stack.alice, 'POST', '/api/tasks', {
      engagement_id: engagement,
      text: TEXT,
      async,
    })
    assert.equal(res.status, 200, res.text)
    return (res.body as { task: TaskAnswer }).task
  }
  const receipts = async (id: string) => {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from receipt_outbox where subject = ${id}
    `.execute(stack.db)
    return rows[0]!.n
  }
  const runs = async (id: string) => {
    const res = await stack.call(stack.alice, 'GET', `/api/tasks/${id}/runs`)
    assert.equal(res.status, 200, res.text)
    return res.body.runs as RunAnswer[] | null
  }

  let completed: TaskAnswer
  let failed: TaskAnswer[] = []

  before(async () => {
    // sync tasks continue asynchronously at once; a failed call is retried twice (1 s, then 2 s later)
    stack = await startFullStack({
      RENTAL_TASK_TIMEOUT_MS: '1',
      RENTAL_TASK_RETRIES: '2',
      // the first retries wait up to 3 s and 6 s: a task with the agents down is running a while
      RENTAL_TASK_RETRY_BASE_MS: '3000',
    })
    did = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
    completed = await settled((await post(false)).id, 'completed')
  })
  after(async () => {
    await agentsAgain?.close()
    await stack.close()
  })

  it('an ended task is neither canceled nor retried: 409 naming its state', async () => {
    const cancel = await stack.call(stack.alice, 'POST', `/api/tasks/${completed.id}/cancel`)
    assert.equal(cancel.status, 409, cancel.text)
    assert.deepEqual((cancel.body.error as { code: string }).code, 'task_not_cancelable')
    assert.match((cancel.body.error as { message: string }).message, /completed/)
    const retry = await stack.call(stack.alice, 'POST', `/api/tasks/${completed.id}/retry`)
    assert.equal(retry.status, 409, retry.text)
    assert.equal((retry.body.error as { code: string }).code, 'task_not_retryable')
    assert.match((retry.body.error as { message: string }).message, /completed/)
    assert.equal((await task(completed.id)).state, 'completed')
    assert.equal(await runs(completed.id), null)
  })

  it('another organization’s task is not found on every operation', async () => {
    for (const [method, path] of [
      ['POST', 'cancel'],
      ['GET', 'runs'],
      ['POST', 'retry'],
    ] as const) {
      const res = await stack.call(stack.bob, method, `/api/tasks/${completed.id}/${path}`)
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`)
      assert.equal((res.body.error as { code: string }).code, 'task_not_found')
    }
  })

  it('a running task is canceled: no receipt, and the agent’s later answer does not count', async () => {
    // the agents are down: the task waits between attempts
    await stack.agents.close()
    const running = await post(true)
    failed = [await post(true), await post(true)]
    const res = await stack.call(stack.alice, 'POST', `/api/tasks/${running.id}/cancel`)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.state, 'canceled')
    assert.equal(res.body.id, running.id)
    const again = await stack.call(stack.alice, 'POST', `/api/tasks/${running.id}/cancel`)
    assert.equal(again.status, 409, again.text)
    assert.match((again.body.error as { message: string }).message, /canceled/)
    await new Promise((resolve) => setTimeout(resolve, 1500))
    assert.equal((await task(running.id)).state, 'canceled')
    assert.equal(await receipts(running.id), 0)
  })

  it('a failed task lists each attempt with its start, end, outcome, error and agent', async () => {
    for (const f of failed) await settled(f.id, 'failed')
    const list = (await runs(failed[0]!.id))!
    assert.equal(list.length, 3, JSON.stringify(list))
    assert.deepEqual(
      list.map((r) => r.attempt),
      [1, 2, 3],
    )
    for (const run of list) {
      assert.equal(run.outcome, 'failed')
      assert.equal(run.agent_did, did)
      assert.ok(run.started_at && run.ended_at && run.started_at <= run.ended_at, JSON.stringify(run))
      assert.ok(run.error)
    }
  })

  it('two concurrent retries settle on one new attempt, which completes with one receipt', async () => {
    // the agents come back on the same address with the same keys
    const url = stack.agents.url
    agentsAgain = await startService(
      agents,
      testEnv({
        AGENTS_KEY_SEED: Buffer.alloc(32, 7).toString('base64url'),
        AGENTS_PORT: new URL(url).port,
        AGENTS_URL: url,
        IDP_URL: stack.idp.url,
      }),
    )
    const id = failed[0]!.id
    const answers = await Promise.all(
      [1, 2].map(() => stack.call(stack.alice, 'POST', `/api/tasks/${id}/retry`)),
    )
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409], answers.map((a) => a.text).join('\n'))
    const ok = answers.find((a) => a.status === 200)!
    assert.ok(['submitted', 'working', 'completed'].includes(ok.body.state as string), ok.text)
    const done = await settled(id, 'completed')
    assert.ok(done.receipt?.id)
    assert.equal(done.escrow_id, failed[0]!.escrow_id)
    assert.equal(await receipts(id), 1)
    const list = (await runs(id))!
    assert.equal(list.length, 4, JSON.stringify(list))
    assert.equal(list[3]!.outcome, 'completed')
    assert.equal(list[3]!.error, null)
    const retryAgain = await stack.call(stack.alice, 'POST', `/api/tasks/${id}/retry`)
    assert.equal(retryAgain.status, 409)
  })

  it('a replayed Idempotency-Key answers the first answer and runs nothing again', async () => {
    const id = failed[1]!.id
    const headers = { 'idempotency-key': `retry-${id}` }
    const first = await stack.call(stack.alice, 'POST', `/api/tasks/${id}/retry`, undefined, { headers })
    assert.equal(first.status, 200, first.text)
    await settled(id, 'completed')
    const replay = await stack.call(stack.alice, 'POST', `/api/tasks/${id}/retry`, undefined, { headers })
    assert.equal(replay.status, 200, replay.text)
    assert.deepEqual(replay.body, first.body)
    assert.equal(await receipts(id), 1)
  })
})
