import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import {
  Artifact,
  type Part,
  Role,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  TaskState,
} from '@a2a-js/sdk'
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client'
import { type RunningService, Sealer, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import { b64uEncode } from '@svc/trust/base64url'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { generateEd25519, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { agents } from '../../../agents/src/app.ts'
import { createUser } from '../../../idp/src/areas/accounts/service.ts'
import type { IdpDb } from '../../../idp/src/db.ts'
import { signInOnPage } from '@svc/testing/idp-flow'
import { ledger } from '../../../ledger/src/app.ts'
import { ADMIN, eventually, signIn, type Stack, startStack } from '../support/stack.ts'

/** A port nothing listens on now, for a service that must start after the rental that names it. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

const LEDGER_WRITER = 'a2a-test-ledger-writer-0001'
const PARAGRAPH =
  'The rental service hires agents for jobs. Each task is paid from an escrow the client signs. ' +
  'The agent signs its result with its own key. The receipt of every completed task goes to the ledger. ' +
  'Clients release the escrow once they accept the output of the agent.'

type Who = { jar: CookieJar; csrf: string; subject: string }

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
})
const send = (
  texts: string[],
  engagementId: string | undefined,
  configuration?: Partial<NonNullable<SendMessageRequest['configuration']>>,
): SendMessageRequest => ({
  tenant: '',
  message: {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: texts.map(text),
    metadata: engagementId ? { engagement_id: engagementId } : undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: configuration
    ? {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        returnImmediately: false,
        ...configuration,
      }
    : undefined,
  metadata: undefined,
})
const codeOf = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (err) {
    return (err as { envelopeCode?: number }).envelopeCode ?? (err as Error).message
  }
  assert.fail('expected an error')
}

/** An SDK client resolved from the rental's card, sending the Bearer token on every call. */
function clientFor(base: string, token: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('authorization', `Bearer ${token}`)
    return fetch(input, { ...init, headers })
  }
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  ).createFromUrl(base)
}

/** Another client: a verified idp account made for the test, signed in at the rental through the idp. */
async function signInAs(stack: Stack, email: string): Promise<Who> {
  const password = 'another-client-password-1'
  await createUser(
    stack.idp.ctx.database!.db as unknown as IdpDb,
    new Sealer(stack.idp.ctx.config.encryptionKey),
    {
      email,
      password,
      name: 'Bob',
      verified: true,
    },
  )
  const jar = new CookieJar()
  const login = await jar.fetch(`${stack.rental.url}/auth/login`)
  let location = login.headers.get('location')!
  for (let hop = 0; hop < 8 && !location.startsWith(`${stack.rental.url}/auth/callback`); hop++) {
    const url = new URL(location, stack.idp.url)
    const res = await jar.fetch(url.toString())
    location =
      res.status === 200 && url.pathname === '/ui/login'
        ? await signInOnPage(stack.idp, jar, await res.text(), { email, password })
        : res.headers.get('location')!
  }
  assert.equal((await jar.fetch(location)).status, 302)
  const me = (await (await jar.fetch(`${stack.rental.url}/api/me`)).json()) as {
    csrf_token: string
    client: { subject: string }
  }
  return { jar, csrf: me.csrf_token, subject: me.client.subject }
}

describe('the rental’s A2A surface (driven by the @a2a-js/sdk client)', () => {
  let stack: Stack
  let agentsService: RunningService<never>
  let ledgerService: RunningService<never>
  let alice: Who
  let bob: Who
  let engagement: string
  let otherEngagement: string
  let token: string
  let tokenId: string
  let client: Client
  let agentsRunning = true

  const call = async (who: Who, method: string, path: string, body?: unknown) => {
    const res = await who.jar.fetch(`${stack.rental.url}${path}`, {
      method,
      headers: { 'x-csrf-token': who.csrf, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
    const answer = (await res.json()) as Record<string, unknown>
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer)}`)
    return answer as never
  }
  const rpc = (body: unknown, auth: string | null = token, raw = false) =>
    fetch(`${stack.rental.url}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(auth === null ? {} : { authorization: `Bearer ${auth}` }),
      },
      body: raw ? (body as string) : JSON.stringify(body),
    })

  /** Hires the summariser and signs its SLA and escrow with a fresh client key: an active engagement. */
  async function activeEngagement(who: Who): Promise<string> {
    const keys = generateEd25519()
    const did = didKeyFromEd25519(keys.publicKey)
    const sign = (body: unknown) => b64uEncode(signEd25519(keys.seed, canonicalBytes(body)))
    await eventually('the catalogue lists the agents', async () => {
      const { jobs } = await call(who, 'GET', '/api/jobs')
      return (jobs as Array<{ agents: unknown[] }>).some((j) => j.agents.length > 0)
    })
    const { jobs } = (await call(who, 'GET', '/api/jobs')) as {
      jobs: Array<{ id: string; agents: Array<{ id: string; did: string }> }>
    }
    const job = jobs.find((j) => j.agents.some((a) => a.id === 'summariser'))!
    const agent = job.agents.find((a) => a.id === 'summariser')!
    const hired = (await call(who, 'POST', '/api/engagements', {
      job_id: job.id,
      agent_did: agent.did,
      client_did: did,
    })) as {
      engagement: { id: string }
      package: { sla: { body: unknown }; escrows: Array<{ body: { escrow_id: string } }> }
    }
    const signed = (await call(who, 'POST', `/api/engagements/${hired.engagement.id}/signatures`, {
      sla_signature: sign(hired.package.sla.body),
      escrow_signatures: hired.package.escrows.map((e) => ({
        escrow_id: e.body.escrow_id,
        signature: sign(e.body),
      })),
    })) as { engagement: { state: string } }
    assert.equal(signed.engagement.state, 'active')
    return hired.engagement.id
  }

  before(async () => {
    ledgerService = (await startService(
      ledger,
      testEnv({ LEDGER_WRITERS: `rental:${LEDGER_WRITER}`, LEDGER_BATCH_WAIT_MS: '2' }),
      { fresh: true },
    )) as unknown as RunningService<never>
    // the agents trust the stack's idp, so they start after it, on the address the rental was given
    const agentsPort = await freePort()
    const agentsUrl = `http://127.0.0.1:${agentsPort}`
    stack = await startStack({
      AGENTS_URL: agentsUrl,
      LEDGER_URL: ledgerService.url,
      RENTAL_LEDGER_TOKEN: LEDGER_WRITER,
      RENTAL_TASK_RETRIES: '1',
      RENTAL_TASK_RETRY_BASE_MS: '200',
    })
    agentsService = (await startService(
      agents,
      testEnv({
        AGENTS_KEY_SEED: Buffer.alloc(32, 7).toString('base64url'),
        AGENTS_PORT: String(agentsPort),
        AGENTS_URL: agentsUrl,
        IDP_URL: stack.idp.url,
      }),
    )) as unknown as RunningService<never>
    const a = await signIn(stack)
    alice = { jar: a.jar, csrf: a.csrf, subject: a.me.client.subject }
    bob = await signInAs(stack, 'bob@example.test')
    assert.notEqual(bob.subject, alice.subject)
    engagement = await activeEngagement(alice)
    otherEngagement = await activeEngagement(alice)
    const issued = (await call(alice, 'POST', '/api/tokens', { label: 'my agent' })) as {
      id: string
      token: string
    }
    token = issued.token
    tokenId = issued.id
    client = await clientFor(stack.rental.url, token)
  })

  after(async () => {
    await stack?.close()
    await ledgerService?.close()
    if (agentsRunning) await agentsService?.close()
  })

  it('serves the A2A 1.0 card at agent-card.json and agent.json, with the Bearer scheme', async () => {
    for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json']) {
      const res = await fetch(`${stack.rental.url}${path}`)
      assert.equal(res.status, 200)
      const card = (await res.json()) as Record<string, unknown> & {
        supportedInterfaces: Array<Record<string, string>>
        skills: Array<{ id: string }>
      }
      assert.deepEqual(card.supportedInterfaces, [
        { url: `${stack.rental.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: `${stack.rental.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ])
      assert.deepEqual(card.capabilities, {
        streaming: true,
        pushNotifications: false,
        extendedAgentCard: false,
      })
      const schemes = card.securitySchemes as Record<
        string,
        { httpAuthSecurityScheme: Record<string, string> }
      >
      assert.equal(schemes.agtBearer!.httpAuthSecurityScheme.scheme, 'Bearer')
      assert.equal(schemes.agtBearer!.httpAuthSecurityScheme.bearerFormat, 'agt_')
      assert.deepEqual(card.securityRequirements, [{ schemes: { agtBearer: { list: [] } } }])
      assert.ok(card.skills.length >= 1)
      assert.deepEqual(card.defaultInputModes, ['text/plain'])
    }
    const card = await client.getAgentCard()
    assert.equal(card.name, 'svc agent rental')
  })

  it('tags the card with an ETag (304 on If-None-Match) and documents itself at its documentationUrl', async () => {
    const res = await fetch(`${stack.rental.url}/.well-known/agent-card.json`)
    const etag = res.headers.get('etag')
    assert.match(etag ?? '', /^"[A-Za-z0-9_-]+"$/)
    const card = (await res.json()) as { documentationUrl: string }
    const cached = await fetch(`${stack.rental.url}/.well-known/agent-card.json`, {
      headers: { 'if-none-match': `W/"other", ${etag}` },
    })
    assert.equal(cached.status, 304)
    assert.equal(cached.headers.get('etag'), etag)
    const stale = await fetch(`${stack.rental.url}/.well-known/agent.json`, {
      headers: { 'if-none-match': '"stale"' },
    })
    assert.equal(stale.status, 200)
    const docs = await fetch(card.documentationUrl)
    assert.equal(docs.status, 200)
    assert.match(docs.headers.get('content-type') ?? '', /^text\/html/)
    const page = await docs.text()
    assert.match(page, /POST<\/span> <code>\/a2a<\/code>/)
    assert.match(page, /POST<\/span> <code>\/api\/tasks<\/code>/)
  })

  it('A2A errors as §3.3 says: ContentTypeNotSupported, TaskNotFound for an unknown taskId, UnsupportedOperation for an ended task, an undeclared extended card, a bad status filter', async () => {
    const data: Part = {
      content: { $case: 'data', value: { a: 1 } },
      metadata: undefined,
      filename: '',
      mediaType: 'application/json',
    }
    const withData = send([PARAGRAPH], engagement)
    withData.message!.parts.push(data)
    assert.equal(await codeOf(client.sendMessage(withData)), -32005)
    const html = send([PARAGRAPH], engagement)
    html.message!.parts[0]!.mediaType = 'text/html'
    assert.equal(await codeOf(client.sendMessage(html)), -32005)

    const unknown = send([PARAGRAPH], engagement)
    unknown.message!.taskId = 'tsk_doesnotexist'
    assert.equal(await codeOf(client.sendMessage(unknown)), -32001)
    const done = (await client.sendMessage(send([PARAGRAPH], engagement))) as Task
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED)
    const more = send([PARAGRAPH], engagement)
    more.message!.taskId = done.id
    assert.equal(await codeOf(client.sendMessage(more)), -32004)

    const extended = await rpc({ jsonrpc: '2.0', id: 4, method: 'GetExtendedAgentCard', params: {} })
    assert.equal(((await extended.json()) as { error: { code: number } }).error.code, -32004)

    for (const status of ['BOGUS', 99, 'UNRECOGNIZED', -1]) {
      const res = await rpc({ jsonrpc: '2.0', id: 5, method: 'ListTasks', params: { status } })
      const answer = (await res.json()) as { error?: { code: number } }
      assert.equal(answer.error?.code, -32602, `status ${JSON.stringify(status)}`)
    }
    const completed = await client.listTasks({
      tenant: '',
      contextId: engagement,
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 100,
      pageToken: '',
      statusTimestampAfter: undefined,
    })
    assert.ok(completed.tasks.some((t) => t.id === done.id))
  })

  it('SendMessage runs the hired agent and answers the completed task with output and receipt', async () => {
    const task = (await client.sendMessage(send([PARAGRAPH], engagement))) as Task
    assert.match(task.id, /^tsk_/)
    assert.equal(task.contextId, engagement)
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED)
    assert.equal(task.artifacts.length, 1)
    const artifact = Artifact.toJSON(task.artifacts[0]!) as {
      parts: Array<{ text?: string; data?: unknown }>
      metadata: Record<string, unknown>
    }
    assert.ok(artifact.parts.some((p) => typeof p.text === 'string' && p.text.length > 0))
    assert.ok(artifact.parts.some((p) => p.data !== undefined))
    assert.equal(typeof artifact.metadata.svc_signature, 'string')
    const metadata = task.metadata as {
      receipt: { id: string; leaf_hash: string; ledger_index: number | null }
      escrow: { id: string; hash: string; body: { type: string; task_id: string } }
    }
    assert.ok(metadata.receipt.id)
    assert.ok(metadata.receipt.leaf_hash)
    // the engagement's first task takes the package's escrow (signed at hire): its body names no task
    assert.equal(metadata.escrow.body.type, 'svc.escrow')
    assert.equal((metadata.escrow.body as unknown as { engagement_id: string }).engagement_id, engagement)

    // GetTask answers the same task; the ledger index comes once the outbox delivered the receipt
    await eventually('the receipt reaches the ledger', async () => {
      const again = await client.getTask({ tenant: '', id: task.id })
      return (again.metadata as typeof metadata).receipt.ledger_index !== null
    })
    const again = await client.getTask({ tenant: '', id: task.id })
    assert.equal(again.id, task.id)
    assert.equal(again.status?.state, TaskState.TASK_STATE_COMPLETED)
  })

  it('calls the agents with an idp access token it keeps: no token request per task', async () => {
    const tokenGrants = async () => {
      const metrics = await (
        await fetch(`${stack.idp.url}/metrics`, { headers: { 'x-admin-token': ADMIN } })
      ).text()
      const line = metrics
        .split('\n')
        .find(
          (l) =>
            l.startsWith('http_request_duration_seconds_count{') &&
            /route="\/token"/.test(l) &&
            /status_code="200"/.test(l),
        )
      return Number(line?.split(' ').at(-1) ?? 0)
    }
    // the agents refuse a caller without the idp's token
    const anonymous = await fetch(`${agentsService.url}/agents/summariser`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
    })
    assert.equal(anonymous.status, 401)
    const before = await tokenGrants()
    for (let i = 0; i < 3; i++) {
      const task = (await client.sendMessage(send([PARAGRAPH], engagement))) as Task
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED)
    }
    assert.equal(await tokenGrants(), before, 'the token of an earlier task served these three')
  })

  it('returnImmediately answers at once; GetTask follows the task to completion', async () => {
    const task = (await client.sendMessage(
      send([PARAGRAPH], engagement, { returnImmediately: true }),
    )) as Task
    assert.ok(
      [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED].includes(
        task.status!.state,
      ),
    )
    // a later task of the engagement gets its own escrow, offered, with the body to sign
    const escrow = (task.metadata as { escrow: { state: string; body: { task_id: string } } }).escrow
    assert.equal(escrow.state, 'offered')
    assert.equal(escrow.body.task_id, task.id)
    await eventually('the async task completes', async () => {
      const got = await client.getTask({ tenant: '', id: task.id })
      return got.status?.state === TaskState.TASK_STATE_COMPLETED
    })
  })

  it('ListTasks pages the caller’s tasks, filtered by engagement (contextId)', async () => {
    const first = await client.listTasks({
      tenant: '',
      contextId: engagement,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      pageToken: '',
      statusTimestampAfter: undefined,
    })
    assert.equal(first.tasks.length, 1)
    assert.ok(first.totalSize >= 2)
    assert.ok(first.nextPageToken)
    const second = await client.listTasks({
      tenant: '',
      contextId: engagement,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      pageToken: first.nextPageToken,
      statusTimestampAfter: undefined,
    })
    assert.equal(second.tasks.length, 1)
    assert.notEqual(second.tasks[0]!.id, first.tasks[0]!.id)
    const none = await client.listTasks({
      tenant: '',
      contextId: otherEngagement,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 10,
      pageToken: '',
      statusTimestampAfter: undefined,
    })
    assert.equal(none.tasks.length, 0)
    const later = await client.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 10,
      pageToken: '',
      statusTimestampAfter: new Date(Date.now() + 60_000).toISOString(),
    })
    assert.equal(later.tasks.length, 0)
  })

  it('SendStreamingMessage streams the task, its status changes and output, up to completion', async () => {
    const events: StreamResponse[] = []
    for await (const event of client.sendMessageStream(send([PARAGRAPH], engagement))) events.push(event)
    assert.equal(events[0]!.payload?.$case, 'task')
    const last = events.at(-1)!.payload
    assert.equal(last?.$case, 'statusUpdate')
    assert.equal(last?.$case === 'statusUpdate' && last.value.status?.state, TaskState.TASK_STATE_COMPLETED)
    assert.ok(events.some((e) => e.payload?.$case === 'artifactUpdate'))
  })

  it('CancelTask cancels a task that has not ended; the agent’s late answer is dropped, with no receipt', async () => {
    const task = (await client.sendMessage(
      send([PARAGRAPH], engagement, { returnImmediately: true }),
    )) as Task
    if (task.status!.state === TaskState.TASK_STATE_COMPLETED) return // the runner was quicker: nothing to cancel
    const canceled = await client
      .cancelTask({ tenant: '', id: task.id, metadata: undefined })
      .catch(async (err) => {
        // the runner may still finish between the send's answer and the cancel: then it is not cancelable
        assert.equal(await codeOf(Promise.reject(err)), -32002)
        const now = await client.getTask({ tenant: '', id: task.id })
        assert.equal(now.status?.state, TaskState.TASK_STATE_COMPLETED)
        return undefined
      })
    if (!canceled) return
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED)
    // the runner's next poll finds it ended and leaves it so
    await new Promise((r) => setTimeout(r, 2_500))
    const later = await client.getTask({ tenant: '', id: task.id })
    assert.equal(later.status?.state, TaskState.TASK_STATE_CANCELED)
    assert.equal((later.metadata as { receipt: unknown }).receipt, null)
    assert.equal(await codeOf(client.cancelTask({ tenant: '', id: task.id, metadata: undefined })), -32002)
  })

  it('CancelTask on a finished task is TaskNotCancelable; SubscribeToTask on it is refused', async () => {
    const { tasks } = await client.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 1,
      pageToken: '',
      statusTimestampAfter: undefined,
    })
    const id = tasks[0]!.id
    assert.equal(await codeOf(client.cancelTask({ tenant: '', id, metadata: undefined })), -32002)
    const res = await rpc({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id } })
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32004)
  })

  it('an unknown task, or another client’s, is TaskNotFound', async () => {
    assert.equal(await codeOf(client.getTask({ tenant: '', id: 'tsk_nope' })), -32001)
    {
      const bobEngagement = await activeEngagement(bob)
      const bobToken = ((await call(bob, 'POST', '/api/tokens', { label: 'bob' })) as { token: string }).token
      const bobClient = await clientFor(stack.rental.url, bobToken)
      const bobTask = (await bobClient.sendMessage(send([PARAGRAPH], bobEngagement))) as Task
      assert.equal(await codeOf(client.getTask({ tenant: '', id: bobTask.id })), -32001)
      // and Bob's token cannot run a task on Alice's engagement
      assert.equal(await codeOf(bobClient.sendMessage(send([PARAGRAPH], engagement))), -32602)
    }
  })

  it('a token restricted to another engagement or lacking a scope is refused (-31403)', async () => {
    const limited = (await call(alice, 'POST', '/api/tokens', { label: 'limited' })) as {
      id: string
      token: string
    }
    await call(alice, 'POST', `/api/tokens/${limited.id}/policy`, {
      engagement_ids: [otherEngagement],
      scopes: ['tasks:read'],
    })
    const limitedClient = await clientFor(stack.rental.url, limited.token)
    assert.equal(await codeOf(limitedClient.sendMessage(send([PARAGRAPH], engagement))), -31403)
    await call(alice, 'POST', `/api/tokens/${limited.id}/policy`, { scopes: ['tasks:read', 'tasks:write'] })
    const refused = await rpc(
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'SendMessage',
        params: {
          message: {
            messageId: 'm1',
            role: 'ROLE_USER',
            parts: [{ text: 'hello' }],
            metadata: { engagement_id: engagement },
          },
        },
      },
      limited.token,
    )
    assert.equal(refused.status, 200)
    const body = (await refused.json()) as { id: number; error: { code: number; data: unknown[] } }
    assert.equal(body.id, 7)
    assert.equal(body.error.code, -31403)
    assert.ok(body.error.data.length > 0)
    // a stream refused before its first event is a plain JSON-RPC error, not SSE
    const streamed = await rpc(
      {
        jsonrpc: '2.0',
        id: 8,
        method: 'SendStreamingMessage',
        params: {
          message: {
            messageId: 'm2',
            role: 'ROLE_USER',
            parts: [{ text: 'hello' }],
            metadata: { engagement_id: engagement },
          },
        },
      },
      limited.token,
    )
    assert.match(streamed.headers.get('content-type') ?? '', /application\/json/)
    assert.equal(((await streamed.json()) as { error: { code: number } }).error.code, -31403)
    // the task of an engagement outside the token is not found
    const { tasks } = await client.listTasks({
      tenant: '',
      contextId: engagement,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      pageToken: '',
      statusTimestampAfter: undefined,
    })
    assert.equal(await codeOf(limitedClient.getTask({ tenant: '', id: tasks[0]!.id })), -32001)
  })

  it('no token, an unknown one, a revoked one and a rotated-away one are HTTP 401 with WWW-Authenticate', async () => {
    const probe = { jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: 'tsk_x' } }
    const none = await rpc(probe, null)
    assert.equal(none.status, 401)
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/)
    assert.equal(((await none.json()) as { error: { code: number } }).error.code, -31401)
    assert.equal((await rpc(probe, `agt_${'A'.repeat(43)}`)).status, 401)

    const rotated = (await call(alice, 'POST', '/api/tokens', { label: 'rotated' })) as {
      id: string
      token: string
    }
    const fresh = (await call(alice, 'POST', `/api/tokens/${rotated.id}/rotate`)) as { token: string }
    const old = await rpc(probe, rotated.token)
    assert.equal(old.status, 401)
    assert.match(old.headers.get('www-authenticate') ?? '', /invalid_token/)
    assert.equal((await rpc(probe, fresh.token)).status, 200)

    await call(alice, 'DELETE', `/api/tokens/${rotated.id}`)
    assert.equal((await rpc(probe, fresh.token)).status, 401)
    const revokedClient = await clientFor(stack.rental.url, fresh.token)
    await assert.rejects(revokedClient.getTask({ tenant: '', id: 'tsk_x' }))
    assert.ok(tokenId)
  })

  it('bad JSON-RPC answers the proper codes with error.data, never a 5XX', async () => {
    const cases: Array<[unknown, number, boolean?]> = [
      ['{not json', -32700, true],
      [[{ jsonrpc: '2.0', id: 1, method: 'GetTask' }], -32600],
      [{ jsonrpc: '1.0', id: 1, method: 'GetTask', params: {} }, -32600],
      [{ jsonrpc: '2.0', id: 1, method: 'NoSuchMethod', params: {} }, -32601],
      [{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: [] }, -32602],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: {} }] } },
        },
        -32005,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'no engagement' }] } },
        },
        -32602,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: {
            message: {
              messageId: 'm',
              role: 'ROLE_USER',
              parts: [{ text: 'x' }],
              metadata: { engagement_id: 'eng_unknown' },
            },
          },
        },
        -32602,
      ],
      [{ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageToken: 'garbage' } }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageSize: 500 } }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { parts: 'x' } } }, -32602],
      [{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'tsk_unknown' } }, -32001],
    ]
    for (const [body, code, raw] of cases) {
      const res = await rpc(body, token, raw)
      assert.equal(res.status, 200, JSON.stringify(body))
      const answer = (await res.json()) as { error?: { code: number; data?: unknown[] } }
      assert.equal(answer.error?.code, code, JSON.stringify(body))
      if (code !== -32700)
        assert.ok((answer.error?.data ?? []).length > 0, `error.data for ${JSON.stringify(body)}`)
    }
  })

  it('answers the 0.3 aliases in the 0.3 form', async () => {
    const res = await rpc({
      jsonrpc: '2.0',
      id: 'x',
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          messageId: randomUUID(),
          role: 'user',
          parts: [{ kind: 'text', text: PARAGRAPH }],
          metadata: { engagement_id: engagement },
        },
        configuration: { blocking: true },
      },
    })
    const body = (await res.json()) as { result: { kind: string; id: string; status: { state: string } } }
    assert.equal(body.result.kind, 'task')
    assert.equal(body.result.status.state, 'completed')
    const got = (await (
      await rpc({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: body.result.id } })
    ).json()) as { result: { id: string; contextId: string } }
    assert.equal(got.result.id, body.result.id)
    assert.equal(got.result.contextId, engagement)
  })

  it('SubscribeToTask follows a running task to TASK_STATE_FAILED when its agent is gone (last: stops the agents)', async () => {
    await agentsService.close()
    agentsRunning = false
    const task = (await client.sendMessage(
      send([PARAGRAPH], engagement, { returnImmediately: true }),
    )) as Task
    const events: StreamResponse[] = []
    for await (const event of client.resubscribeTask({ tenant: '', id: task.id })) events.push(event)
    assert.equal(events[0]!.payload?.$case, 'task')
    const last = events.at(-1)!.payload
    assert.equal(last?.$case === 'statusUpdate' && last.value.status?.state, TaskState.TASK_STATE_FAILED)
    const failed = await client.getTask({ tenant: '', id: task.id })
    assert.equal(failed.status?.state, TaskState.TASK_STATE_FAILED)
    assert.equal(failed.artifacts.length, 0)
    assert.ok(failed.status?.message?.parts.length)
  })
})
