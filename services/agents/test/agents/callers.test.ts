import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type Part, Role, type SendMessageRequest, type Task, TaskState } from '@a2a-js/sdk'
import type { Client } from '@a2a-js/sdk/client'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import type { IdpConfig } from '../../../idp/src/config.ts'
import { agents } from '../../src/app.ts'
import type { AgentsConfig } from '../../src/config.ts'
import { factoryWithToken, newCaller, registerResource, startIdp } from '../support/callers.ts'

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
})
const send = (parts: Part[], taskId = ''): SendMessageRequest => ({
  tenant: '',
  message: {
    messageId: randomUUID(),
    contextId: '',
    taskId,
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
})
const list = {
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageSize: 100,
  pageToken: '',
  historyLength: 0,
  statusTimestampAfter: undefined,
  includeArtifacts: false,
}
const codeOf = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (err) {
    return (err as { envelopeCode?: number }).envelopeCode ?? (err as Error).message
  }
  assert.fail('expected an error')
}

describe('the agents authenticate their callers (idp access tokens for their URL)', () => {
  let idpService: RunningService<IdpConfig>
  let service: RunningService<AgentsConfig>
  let alice: Client
  let bob: Client
  let aliceToken: string
  let bobToken: string
  let foreignToken: string
  let cardUrl: string

  const rpc = (body: unknown, token?: string, path = '/agents/summariser') =>
    fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify(body),
    })

  before(async () => {
    idpService = await startIdp()
    service = await startService(
      agents,
      testEnv({ AGENTS_KEY_SEED: Buffer.alloc(32, 3).toString('base64url'), IDP_URL: idpService.url }),
      { fresh: true },
    )
    await registerResource(idpService, service.url)
    aliceToken = (await newCaller(idpService, 'caller-a', service.url)).token
    bobToken = (await newCaller(idpService, 'caller-b', service.url)).token
    // a token of the same idp for its client itself (no resource): its audience is not the agents
    foreignToken = (await newCaller(idpService, 'caller-c')).token
    cardUrl = `${service.url}/agents/summariser/.well-known/agent-card.json`
    alice = await factoryWithToken(aliceToken).createFromUrl(cardUrl, '')
    bob = await factoryWithToken(bobToken).createFromUrl(cardUrl, '')
  })
  after(async () => {
    await service?.close()
    await idpService?.close()
  })

  it('refuses every call without a token: HTTP 401, a Bearer challenge and JSON-RPC -31401, before validation', async () => {
    const calls = [
      {
        method: 'SendMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } },
      },
      {
        method: 'SendStreamingMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } },
      },
      { method: 'GetTask', params: { id: randomUUID() } },
      { method: 'ListTasks', params: {} },
      { method: 'CancelTask', params: { id: randomUUID() } },
      { method: 'SubscribeToTask', params: { id: randomUUID() } },
      { method: 'tasks/get', params: { id: randomUUID() } },
    ]
    for (const [i, call] of calls.entries()) {
      const res = await rpc({ jsonrpc: '2.0', id: i, ...call })
      assert.equal(res.status, 401, call.method)
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="agents"')
      const body = (await res.json()) as { id: number; error: { code: number; data: unknown[] } }
      assert.equal(body.id, i)
      assert.equal(body.error.code, -31401)
      assert.ok(body.error.data.length > 0)
    }
    // a malformed agent id is still a 401 first: authentication comes before validation
    assert.equal(
      (await rpc({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }, undefined, '/agents/NO!'))
        .status,
      401,
    )
    const anonymous = await factoryWithToken(undefined).createFromUrl(cardUrl, '')
    await assert.rejects(anonymous.listTasks(list))
    await assert.rejects(anonymous.sendMessage(send([text('hello')])))
    await assert.rejects(anonymous.getTask({ tenant: '', id: randomUUID(), historyLength: undefined }))
  })

  it('refuses a token that is malformed, tampered with, or meant for another audience (invalid_token)', async () => {
    const probe = { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }
    const [head, payload] = aliceToken.split('.')
    const tampered = `${head}.${payload}.${'A'.repeat(342)}`
    for (const [token, why] of [
      ['not-a-jwt', /malformed/],
      [tampered, /bad signature/],
      [foreignToken, /claim aud/],
    ] as const) {
      const res = await rpc(probe, token)
      assert.equal(res.status, 401)
      const challenge = res.headers.get('www-authenticate') ?? ''
      assert.match(challenge, /^Bearer realm="agents", error="invalid_token", error_description="/)
      assert.match(challenge, why)
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, -31401)
    }
    const basic = await fetch(`${service.url}/agents/summariser`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Basic dXNlcjpwYXNz' },
      body: JSON.stringify(probe),
    })
    assert.equal(basic.status, 401)
  })

  it('each caller lists and reaches only its own tasks', async () => {
    const mine = (await alice.sendMessage(send([text('Alice writes one sentence. And another.')]))) as Task
    assert.equal(mine.status?.state, TaskState.TASK_STATE_COMPLETED)
    const bobs = (await bob.sendMessage(send([text('Bob writes his own.')]))) as Task

    const aliceList = await alice.listTasks(list)
    assert.ok(aliceList.tasks.some((t) => t.id === mine.id))
    assert.ok(!aliceList.tasks.some((t) => t.id === bobs.id))
    const bobList = await bob.listTasks(list)
    assert.deepEqual(
      bobList.tasks.map((t) => t.id),
      [bobs.id],
    )
    assert.equal(bobList.totalSize, 1)

    assert.equal((await alice.getTask({ tenant: '', id: mine.id, historyLength: undefined })).id, mine.id)
    assert.equal(await codeOf(bob.getTask({ tenant: '', id: mine.id, historyLength: undefined })), -32001)
    assert.equal(await codeOf(bob.cancelTask({ tenant: '', id: mine.id, metadata: undefined })), -32001)
    assert.equal(await codeOf(bob.sendMessage(send([text('more')], mine.id))), -32001)
    const subscribe = await rpc(
      { jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: mine.id } },
      bobToken,
    )
    assert.equal(((await subscribe.json()) as { error: { code: number } }).error.code, -32001)
    // her own ended task takes no more messages (A2A 1.0 §3.1.1)
    assert.equal(await codeOf(alice.sendMessage(send([text('more')], mine.id))), -32004)
  })

  it('a part in a media type the agent does not take is ContentTypeNotSupported (-32005)', async () => {
    const data: Part = {
      content: { $case: 'data', value: { a: 1 } },
      metadata: undefined,
      filename: '',
      mediaType: '',
    }
    assert.equal(await codeOf(alice.sendMessage(send([text('hello'), data]))), -32005)
    const markdown = { ...text('# hello'), mediaType: 'image/png' }
    assert.equal(await codeOf(alice.sendMessage(send([markdown]))), -32005)
  })

  it('answers 503, not 401, while the idp’s keys cannot be read', async () => {
    const orphan = await startService(
      agents,
      testEnv({ AGENTS_KEY_SEED: Buffer.alloc(32, 3).toString('base64url'), IDP_URL: 'http://127.0.0.1:9' }),
      { fresh: true },
    )
    try {
      const res = await request(`${orphan.url}/agents/summariser`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${aliceToken}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
      })
      assert.equal(res.status, 503)
      assert.equal((res.body.error as { code: string }).code, 'idp_unavailable')
      assert.equal(res.headers.get('retry-after'), '5')
    } finally {
      await orphan.close()
    }
  })
})
