import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { TaskState } from '@a2a-js/sdk'
import {
  type Client as A2AClient,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client'
import * as oidc from 'openid-client'
import { Sealer } from '@svc/kit'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { ADMIN, eventually } from '../support/stack.ts'

const TEXT =
  'A task the rental ends while its agent holds it: the agent is told with an A2A CancelTask of its own task, so it stops working on it.'

/**
 * The rental ends a task its agent holds (a rejected approval while the agent asks, a client's
 * cancel while it works): the built-in agent is told (A2A CancelTask), seen with GetTask at the
 * agent, called as the rental (its idp client's credentials, openid-client's grant).
 */
describe('tasks: the agent is told when the rental ends its task', () => {
  let stack: FullStack
  let did: string
  let engagement: string
  let agent: A2AClient

  const post = async (text: string) => {
    const res = await stack.call(stack.alice, 'POST', '/api/tasks', {
      engagement_id: engagement,
      text,
      async: true,
    })
    assert.equal(res.status, 200, res.text)
    return (res.body as { task: { id: string } }).task.id
  }
  const row = (id: string) =>
    stack.db
      .selectFrom('tasks')
      .select(['state', 'agent_task_id', 'runs'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  const agentState = async (agentTaskId: string) =>
    (await agent.getTask({ tenant: '', id: agentTaskId, historyLength: 0 })).status?.state

  before(async () => {
    // the agent works 20 s on a task (unless canceled): a task canceled while running
    stack = await startFullStack({}, { agentsEnv: { AGENTS_DELAY_MS: '20000' } })
    did = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
    // the rental's own credentials at the agents (its idp client), as its dispatcher has them
    const client = await stack.db.selectFrom('idp_clients').selectAll().executeTakeFirstOrThrow()
    const secret = new Sealer(stack.rental.ctx.config.encryptionKey)
      .open(client.client_secret_sealed, `idp-client:${client.client_id}`)
      .toString('utf8')
    const config = await oidc.discovery(
      new URL(stack.idp.url),
      client.client_id,
      { client_secret: secret },
      oidc.ClientSecretBasic(secret),
      { execute: [oidc.allowInsecureRequests] },
    )
    // the agents' resource at the idp, as the rental registers it at its first task (409: already)
    const registered = await fetch(`${stack.idp.url}/manage/v1/resources`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: stack.agents.url, name: 'svc built-in agents' }),
    })
    assert.ok(registered.status === 201 || registered.status === 409, String(registered.status))
    const { access_token } = await oidc.clientCredentialsGrant(config, { resource: stack.agents.url })
    const fetchImpl: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set('authorization', `Bearer ${access_token}`)
      return fetch(input, { ...init, headers })
    }
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
      }),
    )
    const card = await stack.db
      .selectFrom('agents')
      .select('card_url')
      .where('did', '=', did)
      .executeTakeFirstOrThrow()
    agent = await factory.createFromUrl(card.card_url, '')
  })
  after(async () => stack?.close())

  it('an approval rejected while the agent asks: the agent’s task is canceled', async () => {
    const id = await post(`${TEXT} [confirm]`)
    await eventually('the agent asks', async () => (await row(id)).state === 'input-required')
    const agentTaskId = (await row(id)).agent_task_id!
    assert.equal(await agentState(agentTaskId), TaskState.TASK_STATE_INPUT_REQUIRED)
    const approvals = (await stack.call(stack.alice, 'GET', '/api/approvals?limit=100')).body
      .approvals as Array<{
      id: string
      task_id: string
    }>
    const asked = approvals.find((a) => a.task_id === id)!
    const rejected = await stack.call(stack.alice, 'POST', `/api/approvals/${asked.id}/reject`)
    assert.equal(rejected.status, 200, rejected.text)
    await eventually(
      'the agent canceled its task',
      async () => (await agentState(agentTaskId)) === TaskState.TASK_STATE_CANCELED,
    )
    assert.equal((await row(id)).state, 'rejected')
  })

  it('a running task canceled by the client: the agent stops working on it', async () => {
    const id = await post(TEXT)
    // the rental keeps the agent's task id from the first event of the agent's stream
    await eventually('the agent works on it', async () => (await row(id)).agent_task_id !== null)
    const agentTaskId = (await row(id)).agent_task_id!
    assert.equal(await agentState(agentTaskId), TaskState.TASK_STATE_WORKING)
    const canceled = await stack.call(stack.alice, 'POST', `/api/tasks/${id}/cancel`)
    assert.equal(canceled.status, 200, canceled.text)
    await eventually(
      'the agent canceled its task',
      async () => (await agentState(agentTaskId)) === TaskState.TASK_STATE_CANCELED,
    )
    // the agent's ended stream is not a failed attempt of a task the rental had ended
    const after = await row(id)
    assert.equal(after.state, 'canceled')
    assert.equal(after.runs, null)
    // no failure recorded: the agent answered
    const failed = await stack.db
      .selectFrom('rental_events')
      .select('type')
      .where('stream', '=', id)
      .where('type', '=', 'task.agent_cancel_failed')
      .execute()
    assert.deepEqual(failed, [])
  })

  it('an agent that cannot be reached: after its retries the failure is recorded as an event', async () => {
    const id = await post(`${TEXT} [confirm]`)
    await eventually('the agent asks', async () => (await row(id)).state === 'input-required')
    // the agent's card now points where nothing answers (its catalogue entry moved)
    await stack.db
      .updateTable('agents')
      .set({ card_url: 'http://127.0.0.1:9/agent-card.json' })
      .where('did', '=', did)
      .execute()
    const canceled = await stack.call(stack.alice, 'POST', `/api/tasks/${id}/cancel`)
    assert.equal(canceled.status, 200, canceled.text)
    let failure: { data: unknown } | undefined
    await eventually(
      'the failure is recorded',
      async () =>
        (failure = await stack.db
          .selectFrom('rental_events')
          .select('data')
          .where('stream', '=', id)
          .where('type', '=', 'task.agent_cancel_failed')
          .executeTakeFirst()) !== undefined,
    )
    const data = failure!.data as {
      agent_did: string
      agent_task_id: string
      attempts: number
      error: string
    }
    assert.deepEqual(
      [data.agent_did, data.agent_task_id, data.attempts],
      [did, (await row(id)).agent_task_id, 4],
    )
    assert.ok(data.error.length > 0)
    // the rental's task is canceled whatever the agent answered
    assert.equal((await row(id)).state, 'canceled')
  })
})
