import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { Artifact, type Part, Role, type SendMessageRequest, type Task, TaskState } from '@a2a-js/sdk'
import type { Client } from '@a2a-js/sdk/client'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { checkAgentArtifact, verifyAgentResult } from '@svc/trust/agent-result'
import { agents } from '../../src/app.ts'
import type { AgentsConfig } from '../../src/config.ts'
import type { IdpConfig } from '../../../idp/src/config.ts'
import { factoryWithToken, newCaller, registerResource, startIdp } from '../support/callers.ts'
import { EMAIL, INVOICE, PARAGRAPH } from './fixtures.ts'

const SEED = Buffer.alloc(32, 9).toString('base64url')

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
})
const send = (texts: string[], metadata?: Record<string, unknown>): SendMessageRequest => ({
  tenant: '',
  message: {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: texts.map(text),
    metadata,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
})
/** The task's one artifact in its wire (ProtoJSON) form, as the rental service receives it. */
const wireArtifact = (task: Task) => {
  assert.equal(task.artifacts.length, 1)
  return Artifact.toJSON(task.artifacts[0]!) as {
    parts: Array<{ text?: string; data?: unknown }>
    metadata: Record<string, unknown>
  }
}
const codeOf = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (err) {
    return (err as { envelopeCode?: number }).envelopeCode
  }
  assert.fail('expected an error')
}

describe('agents service over A2A (driven by the @a2a-js/sdk client)', () => {
  let service: RunningService<AgentsConfig>
  let idpService: RunningService<IdpConfig>
  let caller: { clientId: string; token: string }
  const clients = new Map<string, Client>()
  let directory: Array<{ id: string; did: string; card_url: string; skills: string[] }>
  const rpc = (id: string, body: unknown, headers: Record<string, string> = {}) =>
    request(`${service.url}/agents/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${caller.token}`, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })

  before(async () => {
    idpService = await startIdp()
    service = await startService(agents, testEnv({ AGENTS_KEY_SEED: SEED, IDP_URL: idpService.url }), {
      fresh: true,
    })
    await registerResource(idpService, service.url)
    caller = await newCaller(idpService, 'caller-a', service.url)
    directory = (await request(`${service.url}/agents`)).body.agents as typeof directory
    const factory = factoryWithToken(caller.token)
    for (const agent of directory) clients.set(agent.id, await factory.createFromUrl(agent.card_url, ''))
  })
  after(async () => {
    await service?.close()
    await idpService?.close()
  })
  const client = (id: string) => clients.get(id)!

  it('GET /agents lists five agents with a did:key, a card URL and skills', async () => {
    assert.deepEqual(
      directory.map((a) => a.id),
      ['summariser', 'extractor', 'invoice-checker', 'note-taker', 'team-lead'],
    )
    for (const agent of directory) {
      assert.match(agent.did, /^did:key:z6Mk/)
      assert.equal(agent.card_url, `${service.url}/agents/${agent.id}/.well-known/agent-card.json`)
      assert.equal(agent.skills.length, 1)
    }
    assert.equal(new Set(directory.map((a) => a.did)).size, 5)
  })

  it('derives the same DIDs from the same AGENTS_KEY_SEED on another start', async () => {
    const again = await startService(agents, testEnv({ AGENTS_KEY_SEED: SEED }), { fresh: true })
    try {
      const list = (await request(`${again.url}/agents`)).body.agents as typeof directory
      assert.deepEqual(
        list.map((a) => a.did),
        directory.map((a) => a.did),
      )
    } finally {
      await again.close()
    }
  })

  it('serves an A2A 1.0 card (and agent.json alias) with ETag, resolved by the SDK client', async () => {
    const card = await request(directory[0]!.card_url)
    assert.equal(card.status, 200)
    const body = card.body as {
      supportedInterfaces: unknown[]
      capabilities: { streaming: boolean; extensions: Array<{ params: { did: string } }> }
    }
    assert.deepEqual(body.supportedInterfaces[0], {
      url: `${service.url}/agents/summariser`,
      protocolBinding: 'JSONRPC',
      protocolVersion: '1.0',
    })
    assert.equal(body.capabilities.streaming, true)
    const security = card.body as {
      securitySchemes: Record<
        string,
        { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: string } } } }
      >
      securityRequirements: unknown[]
    }
    assert.equal(
      security.securitySchemes.idpClientCredentials!.oauth2SecurityScheme.flows.clientCredentials.tokenUrl,
      `${idpService.url}/token`,
    )
    assert.deepEqual(security.securityRequirements, [{ schemes: { idpClientCredentials: { list: [] } } }])
    assert.equal(body.capabilities.extensions[0]!.params.did, directory[0]!.did)
    const etag = card.headers.get('etag')!
    assert.ok(etag)
    const alias = await request(`${service.url}/agents/summariser/.well-known/agent.json`)
    assert.deepEqual(alias.body, card.body)
    const cached = await fetch(directory[0]!.card_url, { headers: { 'if-none-match': etag } })
    assert.equal(cached.status, 304)
    const listed = await fetch(directory[0]!.card_url, { headers: { 'if-none-match': `"x", W/${etag}` } })
    assert.equal(listed.status, 304)
    const resolved = await client('summariser').getAgentCard()
    assert.equal(resolved.name, 'Summariser')
    assert.equal(client('summariser').protocolVersion, '1.0')
    const missing = await request(`${service.url}/agents/nobody/.well-known/agent-card.json`)
    assert.equal(missing.status, 404)
    assert.equal((missing.body.error as { code: string }).code, 'not_found')
  })

  it('summariser: SendMessage returns the completed task with a signed, verifiable summary', async () => {
    const task = (await client('summariser').sendMessage(send([PARAGRAPH], { max_sentences: 2 }))) as Task
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED)
    const artifact = wireArtifact(task)
    const data = artifact.parts[1]!.data as { summary: string; selected: unknown[] }
    assert.equal(data.selected.length, 2)
    assert.equal(artifact.parts[0]!.text, data.summary)
    assert.ok(data.summary.startsWith('The ledger records every receipt'))
    const check = checkAgentArtifact(artifact, {
      agentDid: directory[0]!.did,
      taskId: task.id,
      inputTexts: [PARAGRAPH],
    })
    assert.equal(check.ok, true, JSON.stringify(check))
    if (check.ok) assert.equal(check.result.context_id, task.contextId)
  })

  it('a tampered output or result fails verification', async () => {
    const task = (await client('summariser').sendMessage(send(['One. Two sentences here.']))) as Task
    const artifact = wireArtifact(task)
    const tampered = structuredClone(artifact)
    ;(tampered.parts[1]!.data as { summary: string }).summary = 'Something else.'
    assert.deepEqual(checkAgentArtifact(tampered), {
      ok: false,
      reason: 'output_sha256 does not match the data part',
    })
    const result = artifact.metadata.svc_result as Record<string, unknown>
    assert.equal(verifyAgentResult(result, artifact.metadata.svc_signature), true)
    assert.equal(verifyAgentResult({ ...result, task_id: 'other' }, artifact.metadata.svc_signature), false)
  })

  it('extractor: finds the emails, dates, AED amounts and the valid IBAN', async () => {
    const task = (await client('extractor').sendMessage(send(EMAIL.split('\n\n')))) as Task
    const artifact = wireArtifact(task)
    const data = artifact.parts[1]!.data as {
      emails: string[]
      ibans: Array<{ iban: string }>
      amounts: Array<{ currency: string; minor: number }>
      dates: Array<{ date: string }>
    }
    assert.deepEqual(data.emails, ['layla@example.ae', 'accounts@vendor.co.uk'])
    assert.deepEqual(
      data.ibans.map((i: { iban: string }) => i.iban),
      ['GB82WEST12345698765432'],
    )
    assert.deepEqual(
      data.amounts
        .filter((a: { currency: string }) => a.currency === 'AED')
        .map((a: { minor: number }) => a.minor),
      [1250000, 200000],
    )
    assert.ok(data.dates.some((d: { date: string }) => d.date === '2025-03-31'))
    assert.match(artifact.parts[0]!.text!, /IBANs: GB82WEST12345698765432/)
    // the input hash is over the text parts as sent, concatenated
    assert.equal(checkAgentArtifact(artifact, { inputTexts: EMAIL.split('\n\n') }).ok, true)
  })

  it('invoice-checker: reports a wrong total', async () => {
    const task = (await client('invoice-checker').sendMessage(send([INVOICE]))) as Task
    const artifact = wireArtifact(task)
    const data = artifact.parts[1]!.data as {
      ok: boolean
      total: unknown
      mismatches: Array<{ field: string }>
    }
    assert.equal(data.ok, false)
    assert.deepEqual(data.total, { computed: '1024.28', stated: '1076.78' })
    assert.ok(data.mismatches.some((m: { field: string }) => m.field === 'total'))
    assert.match(artifact.parts[0]!.text!, /4 mismatch/)
    assert.equal(checkAgentArtifact(artifact, { agentDid: directory[2]!.did }).ok, true)
  })

  it('streams the task, its status updates and the signed artifact', async () => {
    const events = []
    for await (const event of client('invoice-checker').sendMessageStream(
      send(['2 x Tea @ AED 10.00 = AED 20.00']),
    ))
      events.push(event)
    const kinds = events.map((e) => e.payload?.$case)
    assert.deepEqual(kinds, ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'])
    const last = events.at(-1)!.payload
    assert.equal(last?.$case === 'statusUpdate' && last.value.status?.state, TaskState.TASK_STATE_COMPLETED)
    const update = events[2]!.payload
    assert.ok(update?.$case === 'artifactUpdate')
    assert.equal(checkAgentArtifact(Artifact.toJSON(update.value.artifact!)).ok, true)
  })

  it('GetTask, ListTasks and CancelTask of a finished task; unknown tasks', async () => {
    const sent = (await client('extractor').sendMessage(send(['Mail me at a@b.ae']))) as Task
    const got = await client('extractor').getTask({ tenant: '', id: sent.id, historyLength: undefined })
    assert.equal(got.id, sent.id)
    assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED)
    assert.deepEqual(Artifact.toJSON(got.artifacts[0]!), Artifact.toJSON(sent.artifacts[0]!))
    const list = await client('extractor').listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    })
    assert.equal(list.tasks.length, 1)
    assert.ok(list.totalSize >= 2)
    assert.notEqual(list.nextPageToken, '')
    assert.equal(list.tasks[0]!.id, sent.id, 'newest first')
    assert.equal(
      await codeOf(client('extractor').cancelTask({ tenant: '', id: sent.id, metadata: undefined })),
      -32002,
    )
    assert.equal(
      await codeOf(client('extractor').getTask({ tenant: '', id: randomUUID(), historyLength: undefined })),
      -32001,
    )
    assert.equal(
      await codeOf(client('summariser').getTask({ tenant: '', id: sent.id, historyLength: undefined })),
      -32001,
    )
    assert.equal(
      await codeOf(client('extractor').cancelTask({ tenant: '', id: randomUUID(), metadata: undefined })),
      -32001,
    )
  })

  it('SubscribeToTask on a finished task is an unsupported operation', async () => {
    const sent = (await client('summariser').sendMessage(send(['A short text.']))) as Task
    const answer = await rpc('summariser', {
      jsonrpc: '2.0',
      id: 9,
      method: 'SubscribeToTask',
      params: { id: sent.id },
    })
    assert.equal(answer.status, 200)
    assert.equal((answer.body.error as { code: number }).code, -32004)
  })

  it('answers the 0.3 method names in the 0.3 form', async () => {
    const sent = await rpc('invoice-checker', {
      jsonrpc: '2.0',
      id: 'x',
      method: 'message/send',
      params: {
        message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: INVOICE }] },
      },
    })
    const task = sent.body.result as {
      kind: string
      id: string
      status: { state: string }
      artifacts: unknown[]
    }
    assert.equal(task.kind, 'task')
    assert.equal(task.status.state, 'completed')
    assert.equal(checkAgentArtifact(task.artifacts[0], { inputTexts: [INVOICE] }).ok, true)
    const got = await rpc('invoice-checker', {
      jsonrpc: '2.0',
      id: 2,
      method: 'tasks/get',
      params: { id: task.id },
    })
    assert.equal((got.body.result as { id: string }).id, task.id)
    const cancel = await rpc('invoice-checker', {
      jsonrpc: '2.0',
      id: 3,
      method: 'tasks/cancel',
      params: { id: task.id },
    })
    assert.equal((cancel.body.error as { code: number }).code, -32002)
  })

  it('bad JSON-RPC gets the proper error codes, never a 5XX', async () => {
    const cases: Array<[unknown, number, Record<string, string>?]> = [
      ['{not json', -32700],
      ['', -32700],
      ['[]', -32600],
      [{ jsonrpc: '1.0', id: 1, method: 'GetTask', params: {} }, -32600],
      [{ jsonrpc: '2.0', id: { x: 1 }, method: 'GetTask', params: {} }, -32600],
      [{ jsonrpc: '2.0', id: 1, method: 'tasks/dance', params: {} }, -32601],
      [{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: 'x' }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: {} }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { parts: [] } } }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageSize: 1000 } }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageToken: '!!' } }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { status: 'BOGUS' } }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { status: 99 } }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard', params: {} }, -32004],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: { a: 1 } }] } },
        },
        -32005,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              messageId: 'm',
              role: 'user',
              parts: [
                { kind: 'text', text: 'x' },
                { kind: 'file', file: { uri: 'https://x.example/a.pdf', mimeType: 'application/pdf' } },
              ],
            },
          },
        },
        -32005,
      ],
      [{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }, -32009, { 'a2a-version': '9.9' }],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'CreateTaskPushNotificationConfig',
          params: { taskId: 'x', url: 'https://a' },
        },
        -32003,
      ],
    ]
    for (const [body, code, headers] of cases) {
      const answer = await rpc('summariser', body, headers)
      assert.equal(answer.status, 200, JSON.stringify(body))
      assert.equal(
        (answer.body.error as { code: number })?.code,
        code,
        `${JSON.stringify(body)} → ${JSON.stringify(answer.body)}`,
      )
    }
    const unknownAgent = await rpc('nobody', {
      jsonrpc: '2.0',
      id: 1,
      method: 'GetTask',
      params: { id: 'x' },
    })
    assert.equal(unknownAgent.status, 404)
    const html = await request(`${service.url}/agents/summariser`, {
      method: 'POST',
      headers: { 'content-type': 'text/html', authorization: `Bearer ${caller.token}` },
      body: '<p>',
    })
    assert.equal(html.status, 200)
    assert.equal((html.body.error as { code: number }).code, -32700)
  })
})
