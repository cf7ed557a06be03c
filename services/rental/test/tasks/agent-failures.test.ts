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
  receipt: { id: string } | null
  runs: Array<{ attempt: number; error: string }> | null
}

describe('tasks whose agent is slow, lies or is gone', () => {
  let stack: FullStack
  let engagement: string
  let impostor: RunningService<unknown> | undefined
  const TEXT = 'The rental checks every answer an agent gives. An answer that does not verify earns nothing.'

  const task = async (id: string) =>
    (await stack.call(stack.alice, 'GET', `/api/tasks/${id}`)).body as unknown as TaskAnswer
  const settled = async (id: string, state: string) => {
    await eventually(`task ${id} is ${state}`, async () => (await task(id)).state === state)
    return task(id)
  }
  const post = async () => {
    const res = await stack.call(stack.alice, 'POST', '/api/tasks', { engagement_id: engagement, text: TEXT })
    assert.equal(res.status, 200, res.text)
    return res.body as { task: TaskAnswer; message?: string }
  }

  before(async () => {
    // a 1 ms bound: every sync task outlives it; one retry after the first attempt
    stack = await startFullStack({
      RENTAL_TASK_TIMEOUT_MS: '1',
      RENTAL_TASK_RETRIES: '1',
      RENTAL_TASK_RETRY_BASE_MS: '200',
    })
    const did = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
  })
  after(async () => {
    await impostor?.close()
    await stack.close()
  })

  it('a sync task that outlives the bound answers at once and completes asynchronously, receipted once', async () => {
    const created = await post()
    assert.match(created.message ?? '', /did not answer within 1 ms: the task continues asynchronously/)
    assert.notEqual(created.task.state, 'failed')
    const done = await settled(created.task.id, 'completed')
    assert.ok(done.receipt?.id)
    // the sync run and the job both reached the agent; only one completion counts
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from receipt_outbox where subject = ${created.task.id}
    `.execute(stack.db)
    assert.equal(rows[0]!.n, 1)
  })

  it('an answer signed by another key than the engagement’s agent fails the task: no receipt, nothing to release', async () => {
    // the agents service comes back on the same address with other keys: same card, another signer
    const url = stack.agents.url
    await stack.agents.close()
    impostor = await startService(
      agents,
      testEnv({
        AGENTS_KEY_SEED: Buffer.alloc(32, 8).toString('base64url'),
        AGENTS_PORT: new URL(url).port,
        AGENTS_URL: url,
        IDP_URL: stack.idp.url,
      }),
    )
    const created = await post()
    const failed = await settled(created.task.id, 'failed')
    assert.match(failed.error ?? '', /does not verify/)
    assert.equal(failed.receipt, null)
    const pending = await stack.call(stack.alice, 'GET', `/api/engagements/${engagement}/releases/pending`)
    const releases = pending.body.releases as Array<{ escrow: { task_id: string } }>
    assert.ok(!releases.some((r) => r.escrow.task_id === created.task.id))
  })

  it('an agent that cannot be reached: each attempt is kept in runs, and past the last retry the task fails', async () => {
    await impostor!.close()
    impostor = undefined
    const created = await post()
    const failed = await settled(created.task.id, 'failed')
    assert.match(failed.error ?? '', /gave up after 2 attempts/)
    assert.ok((failed.runs?.length ?? 0) >= 2, JSON.stringify(failed.runs))
    assert.equal(failed.receipt, null)
  })
})
