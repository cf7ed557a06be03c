import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import {
  type Action,
  type Call,
  type NotesKey,
  newNotesKey,
  notesIn,
  storeToolCredential,
} from '../support/connect-client.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

// generous: the stack shares two cores with other test runs
const TIMEOUT_MS = 4000
const NOTE = 'Call with ACME on Monday\nThey want the revised quote by Friday.'

describe('connect: tool servers bound to engagements, and tool calls through the rental', () => {
  let stack: FullStack
  let did: string
  let engagement: string
  let key: NotesKey
  const call = (method: string, path: string, body?: unknown, who = stack.alice) =>
    stack.call(who, method, path, body)
  const code = (res: { body: Record<string, unknown> }) =>
    (res.body.error as { code: string } | undefined)?.code
  const message = (res: { body: Record<string, unknown> }) =>
    (res.body.error as { message: string } | undefined)?.message ?? ''
  const newKey = (scope: 'read' | 'write' = 'write', notebookId?: string) =>
    newNotesKey(stack, scope, notebookId)
  const hire = () => stack.hireAndSign(stack.alice, 'job_notes', did, stack.newClientKey())
  const bind = async (eng: string, body: Record<string, unknown>) => {
    const res = await call('POST', `/api/engagements/${eng}/connect`, body)
    assert.equal(res.status, 201, res.text)
    return res
  }
  const runTask = async (eng: string, text = NOTE) => {
    const res = await call('POST', '/api/tasks', { engagement_id: eng, text })
    assert.equal(res.status, 200, res.text)
    const id = (res.body.task as { id: string }).id
    await eventually(`task ${id} ends`, async () =>
      ['completed', 'failed'].includes((await call('GET', `/api/tasks/${id}`)).body.state as string),
    )
    const task = (await call('GET', `/api/tasks/${id}`)).body as {
      id: string
      state: string
      error: string | null
      output: { data: { connected: boolean; calls: Call[] } } | null
    }
    assert.equal(task.state, 'completed', JSON.stringify(task))
    return task
  }
  const action = async (eng: string, id: string) => {
    const res = await call('GET', `/api/engagements/${eng}/connect/actions?limit=100`)
    assert.equal(res.status, 200, res.text)
    const found = (res.body.actions as Action[]).find((a) => a.id === id)
    assert.ok(found, `action ${id} in ${res.text}`)
    return found
  }
  const receiptsOf = async (subject: string) =>
    (
      await sql<{
        receipt_type: string
      }>`select receipt_type from receipt_outbox where subject = ${subject}`.execute(stack.db)
    ).rows.map((r) => r.receipt_type)
  const eventTypes = async (stream: string) =>
    (
      await sql<{
        type: string
      }>`select type from rental_events where stream = ${stream} order by stream_seq`.execute(stack.db)
    ).rows.map((r) => r.type)
  const credentialFor = (taskId: string, eng: string) => storeToolCredential(stack, taskId, eng)
  const toolCall = (token: string, body: unknown) =>
    fetch(`${stack.rental.url}/api/connect/calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }))

  before(async () => {
    stack = await startFullStack({ RENTAL_CONNECT_TIMEOUT_MS: String(TIMEOUT_MS) })
    did = await stack.agentOf('job_notes')
    engagement = await hire()
    key = await newKey()
  })
  after(async () => stack.close())

  it('preview validates a key without storing it: the tools it reaches and what binding would allow', async () => {
    const res = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
      url: key.mcp_url,
      api_key: key.api_key,
    })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.stored, false)
    assert.equal((res.body.server as { name: string }).name, 'svc-demo-notes')
    const tools = res.body.tools as Array<{ name: string; would_allow: boolean; approval: string | null }>
    assert.deepEqual(
      tools.map((t) => [t.name, t.would_allow, t.approval]),
      [
        ['notes.list', true, 'never'],
        ['notes.create', true, 'always'],
        ['notes.delete', true, 'always'],
        ['notes.wait', true, 'never'],
      ],
    )
    assert.ok(!res.text.includes(key.api_key))
    // a read key reaches the read tools only
    const read = await newKey('read', key.notebook_id)
    const reads = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
      url: read.mcp_url,
      api_key: read.api_key,
    })
    assert.deepEqual(
      (reads.body.tools as Array<{ name: string }>).map((t) => t.name),
      ['notes.list', 'notes.wait'],
    )
    // nothing was stored
    const got = await call('GET', `/api/engagements/${engagement}/connect`)
    assert.equal(got.status, 409, got.text)
    assert.equal(code(got), 'not_connected')
  })

  it('bad URLs and keys are 400 with the server’s own error; a hanging server is cut at the timeout', async () => {
    const wrongKey = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
      url: key.mcp_url,
      api_key: 'nk_write_not-a-real-key',
    })
    assert.equal(wrongKey.status, 400, wrongKey.text)
    assert.equal(code(wrongKey), 'tool_server_refused')
    assert.match(message(wrongKey), /an API key of the notes server is required/)
    for (const url of ['ftp://example.com/mcp', 'not a url at all', 'http://user:pw@127.0.0.1/mcp']) {
      const res = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
        url,
        api_key: key.api_key,
      })
      assert.equal(res.status, 400, `${url}: ${res.text}`)
    }
    const notMcp = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
      url: `${stack.agents.url}/agents`,
      api_key: key.api_key,
    })
    assert.equal(notMcp.status, 400, notMcp.text)
    assert.equal(code(notMcp), 'tool_server_refused')
    // a server that accepts the connection and never answers
    const hanging = createServer(() => undefined)
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
    try {
      const started = Date.now()
      const res = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
        url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/mcp`,
        api_key: key.api_key,
      })
      assert.equal(res.status, 400, res.text)
      assert.match(message(res), new RegExp(`did not answer within ${TIMEOUT_MS} ms`))
      assert.ok(Date.now() - started < TIMEOUT_MS + 3000)
    } finally {
      hanging.closeAllConnections()
      hanging.close()
    }
    const unknownTool = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
      url: key.mcp_url,
      api_key: key.api_key,
      tools: [{ name: 'notes.burn' }],
    })
    assert.equal(unknownTool.status, 400)
    assert.equal(code(unknownTool), 'tool_not_available')
    const extra = await call('POST', `/api/engagements/${engagement}/connect`, {
      url: key.mcp_url,
      api_key: key.api_key,
      later: true,
    })
    assert.equal(extra.status, 400)
  })

  it('bind keeps the key sealed and never answers or records it; a second bind is 409', async () => {
    const res = await bind(engagement, {
      url: key.mcp_url,
      api_key: key.api_key,
      tools: [{ name: 'notes.list' }, { name: 'notes.create' }, { name: 'notes.wait' }],
    })
    assert.ok(!res.text.includes(key.api_key))
    assert.equal(res.body.key_hint, `…${key.api_key.slice(-4)}`)
    assert.deepEqual(res.body.allowed_tools, [
      { name: 'notes.list', approval: 'never' },
      { name: 'notes.create', approval: 'always' },
      { name: 'notes.wait', approval: 'never' },
    ])
    for (const path of ['', '/connections', '/tools']) {
      const got = await call('GET', `/api/engagements/${engagement}/connect${path}`)
      assert.equal(got.status, 200, got.text)
      assert.ok(!got.text.includes(key.api_key), path)
    }
    const tools = (await call('GET', `/api/engagements/${engagement}/connect/tools`)).body.tools as Array<{
      name: string
      allowed: boolean
    }>
    assert.deepEqual(
      tools.map((t) => [t.name, t.allowed]),
      [
        ['notes.list', true],
        ['notes.create', true],
        ['notes.delete', false],
        ['notes.wait', true],
      ],
    )
    const { rows } = await sql<{ key_sealed: Buffer }>`select key_sealed from connections`.execute(stack.db)
    assert.equal(rows.length, 1)
    assert.ok(!Buffer.from(rows[0]!.key_sealed).toString('latin1').includes(key.api_key))
    const events = await sql<{ data: unknown }>`select data from rental_events`.execute(stack.db)
    assert.ok(!JSON.stringify(events.rows).includes(key.api_key))
    const again = await call('POST', `/api/engagements/${engagement}/connect`, {
      url: key.mcp_url,
      api_key: key.api_key,
    })
    assert.equal(again.status, 409, again.text)
    assert.equal(code(again), 'already_connected')
  })

  let approvedAction = ''
  it('the note-taker’s read call runs at once; its write waits for a member, runs once approved, with its receipt', async () => {
    const task = await runTask(engagement)
    const [listed, created] = task.output!.data.calls
    assert.equal(listed!.state, 'completed', JSON.stringify(listed))
    assert.equal(created!.status, 202, JSON.stringify(created))
    assert.equal(created!.state, 'pending_approval')
    approvedAction = created!.action_id!
    const list = await action(engagement, listed!.action_id!)
    assert.ok(list.receipt)
    assert.match(list.result_sha256!, /^[0-9a-f]{64}$/)
    assert.deepEqual(await receiptsOf(list.id), ['tool.called'])
    // held: listed among the engagement's approvals and the organization's
    const waiting = await call('GET', `/api/engagements/${engagement}/connect/approvals`)
    assert.deepEqual(
      (waiting.body.actions as Action[]).map((a) => a.id),
      [approvedAction],
    )
    const approval = await call('GET', `/api/approvals/${created!.approval_id}`)
    assert.equal(approval.status, 200, approval.text)
    assert.equal(approval.body.kind, 'tool_call')
    assert.equal(approval.body.action_id, approvedAction)
    assert.deepEqual(await notesIn(key), [])
    const decided = await call('POST', `/api/approvals/${created!.approval_id}/approve`, {})
    assert.equal(decided.status, 200, decided.text)
    await eventually('the approved call is made', async () =>
      ['completed', 'failed'].includes((await action(engagement, approvedAction)).state),
    )
    const made = await action(engagement, approvedAction)
    assert.equal(made.state, 'completed', JSON.stringify(made))
    assert.equal(made.approved_by, stack.alice.me.organization.member_id)
    assert.ok(made.receipt)
    assert.deepEqual((await receiptsOf(approvedAction)).sort(), ['tool.called'])
    assert.deepEqual(await receiptsOf(created!.approval_id!), ['approval.approved'])
    const notes = await notesIn(key)
    assert.deepEqual(
      notes.map((n) => [n.title, n.body]),
      [['Call with ACME on Monday', NOTE]],
    )
    assert.ok((await eventTypes(task.id)).includes('tool.called'))
    const health = (await call('GET', `/api/engagements/${engagement}/connect/connections`)).body
      .connections as Array<{ health: { calls: number; last_success_at: string | null } }>
    assert.equal(health[0]!.health.calls, 2)
    assert.ok(health[0]!.health.last_success_at)
    // the tenant console's view of the same connection (GET /v1/connect/connections/health)
    const tenant = await call('GET', '/v1/connect/connections/health')
    assert.equal(tenant.status, 200, tenant.text)
    const mine = (tenant.body.connections as Array<Record<string, unknown>>).find(
      (c) => c.engagement_id === engagement,
    )
    assert.equal(mine?.state, 'healthy', tenant.text)
    assert.ok(mine?.checked_at)
    assert.equal(typeof mine?.latency_ms, 'number')
  })

  it('a call the binding does not allow is refused by policy and recorded', async () => {
    const narrow = await hire()
    await bind(narrow, { url: key.mcp_url, api_key: key.api_key, tools: [{ name: 'notes.list' }] })
    const task = await runTask(narrow)
    const created = task.output!.data.calls[1]!
    assert.equal(created.status, 403, JSON.stringify(created))
    assert.match(created.error!, /does not allow notes.create/)
    const actions = (await call('GET', `/api/engagements/${narrow}/connect/actions`)).body.actions as Action[]
    const refused = actions.find((a) => a.tool === 'notes.create')!
    assert.equal(refused.state, 'refused')
    assert.equal(refused.receipt, null)
    assert.ok((await eventTypes(task.id)).includes('tool.refused'))
    assert.equal((await notesIn(key)).length, 1)
  })

  it('revoke deletes the key and ends the pending calls with their approvals', async () => {
    const task = await runTask(engagement, 'Second note\nheld, then revoked')
    const held = task.output!.data.calls[1]!
    assert.equal(held.state, 'pending_approval')
    const revoked = await call('DELETE', `/api/engagements/${engagement}/connect`)
    assert.equal(revoked.status, 200, revoked.text)
    assert.deepEqual(revoked.body.canceled_actions, [held.action_id])
    const ended = await action(engagement, held.action_id!)
    assert.equal(ended.state, 'canceled')
    assert.equal((await call('GET', `/api/approvals/${held.approval_id}`)).body.state, 'canceled')
    const late = await call('POST', `/api/approvals/${held.approval_id}/approve`, {})
    assert.equal(late.status, 409, late.text)
    const { rows } = await sql`select id from connections where engagement_id = ${engagement}`.execute(
      stack.db,
    )
    assert.equal(rows.length, 0)
    assert.equal(code(await call('GET', `/api/engagements/${engagement}/connect`)), 'not_connected')
    assert.equal(code(await call('DELETE', `/api/engagements/${engagement}/connect`)), 'not_connected')
    // a refresh of a call made before the revoke: no connection to make it with
    const refresh = await call('POST', `/api/connect/actions/${approvedAction}/refresh`, {})
    assert.equal(refresh.status, 409, refresh.text)
    // the actions stay as the record
    assert.equal((await action(engagement, approvedAction)).state, 'completed')
  })

  it('the tool-call route: credentials, over-size arguments, a hanging tool cut at the timeout, refresh', async () => {
    // a task held by its engagement's policy stays running (input-required): its credential is live
    const eng = await hire()
    const config = await call('POST', `/api/engagements/${eng}/config`, {
      approval: { mode: 'above_price', above_fils: 0 },
    })
    assert.equal(config.status, 200, config.text)
    await bind(eng, { url: key.mcp_url, api_key: key.api_key })
    const posted = await call('POST', '/api/tasks', { engagement_id: eng, text: 'held' })
    const taskId = (posted.body.task as { id: string; state: string }).id
    assert.equal((posted.body.task as { state: string }).state, 'input-required')
    const token = await credentialFor(taskId, eng)

    for (const bad of ['', 'Bearer tct_nope', `Bearer ${token}x`]) {
      const res = await fetch(`${stack.rental.url}/api/connect/calls`, {
        method: 'POST',
        headers: { ...(bad ? { authorization: bad } : {}), 'content-type': 'application/json' },
        body: JSON.stringify({ tool: 'notes.list' }),
      })
      assert.equal(res.status, 401, bad)
    }
    const big = await toolCall(token, {
      tool: 'notes.create',
      arguments: { title: 'x', body: 'y'.repeat(20_000) },
    })
    assert.equal(big.status, 413, JSON.stringify(big))
    assert.equal((big.body.error as { code: string }).code, 'tool_arguments_too_large')
    assert.equal((await toolCall(token, { tool: 'notes.list', extra: 1 })).status, 400)

    const listed = await toolCall(token, { tool: 'notes.list', arguments: { limit: 1 } })
    assert.equal(listed.status, 200, JSON.stringify(listed))
    assert.equal(listed.body.state, 'completed')
    // the tool's own refusal of its arguments is the call's outcome (failed), recorded with its receipt
    const wrong = await toolCall(token, { tool: 'notes.list', arguments: { limit: 'all' } })
    assert.equal(wrong.status, 200)
    assert.equal(wrong.body.state, 'failed')
    assert.match(wrong.body.reason as string, /limit must be an integer/)

    const slow = await toolCall(token, { tool: 'notes.wait', arguments: { ms: TIMEOUT_MS * 3 } })
    assert.equal(slow.status, 200, JSON.stringify(slow))
    assert.equal(slow.body.state, 'timed_out')
    assert.deepEqual(await receiptsOf(slow.body.id as string), ['tool.called'])
    const health = (await call('GET', `/api/engagements/${eng}/connect/connections`)).body
      .connections as Array<{
      health: { last_error: string | null; failures: number }
    }>
    assert.match(health[0]!.health.last_error!, /did not answer within/)
    assert.equal(health[0]!.health.failures, 2)

    // refresh: an idempotent call is made again (a new receipt); a completed write is not
    const again = await call('POST', `/api/connect/actions/${listed.body.id}/refresh`, {})
    assert.equal(again.status, 200, again.text)
    assert.equal(again.body.attempts, 2)
    assert.equal(again.body.state, 'completed')
    assert.deepEqual(await receiptsOf(listed.body.id as string), ['tool.called', 'tool.called'])
    const write = await toolCall(token, { tool: 'notes.delete', arguments: { id: 'note_x' } })
    assert.equal(write.status, 202, JSON.stringify(write))
    const notYet = await call('POST', `/api/connect/actions/${write.body.id}/refresh`, {})
    assert.equal(notYet.status, 409)
    assert.match(message(notYet), /pending_approval/)
    const refused = await toolCall(token, { tool: 'notes.burn' })
    assert.equal(refused.status, 403)
    assert.match((refused.body.error as { message: string }).message, /offers no tool notes.burn/)
    // an ended task's credential no longer works
    assert.equal((await call('POST', `/api/tasks/${taskId}/cancel`, {})).status, 200)
    assert.equal((await toolCall(token, { tool: 'notes.list' })).status, 401)
  })

  it('a connection bound after the engagement’s first task reaches the next task’s agent; a revoke stops it', async () => {
    const eng = await hire()
    const first = await runTask(eng, 'Before the bind\nno tools yet')
    assert.equal(first.output!.data.connected, false)
    await bind(eng, { url: key.mcp_url, api_key: key.api_key, tools: [{ name: 'notes.list' }] })
    const bound = await runTask(eng, 'After the bind\nthe tools are there')
    assert.equal(bound.output!.data.connected, true)
    assert.equal(bound.output!.data.calls[0]!.tool, 'notes.list')
    assert.equal(bound.output!.data.calls[0]!.status, 200, JSON.stringify(bound.output!.data.calls[0]))
    assert.equal((await call('DELETE', `/api/engagements/${eng}/connect`)).status, 200)
    const revoked = await runTask(eng, 'After the revoke\nno tools again')
    assert.equal(revoked.output!.data.connected, false)
    assert.deepEqual(revoked.output!.data.calls, [])
  })

  it('another organization finds none of it (404)', async () => {
    const actionPath = `/api/connect/actions/${approvedAction}/refresh`
    for (const [method, path, body] of [
      ['GET', `/api/engagements/${engagement}/connect`],
      ['GET', `/api/engagements/${engagement}/connect/connections`],
      ['GET', `/api/engagements/${engagement}/connect/tools`],
      ['GET', `/api/engagements/${engagement}/connect/actions`],
      ['GET', `/api/engagements/${engagement}/connect/approvals`],
      ['DELETE', `/api/engagements/${engagement}/connect`],
      ['POST', `/api/engagements/${engagement}/connect`, { url: key.mcp_url, api_key: key.api_key }],
      ['POST', `/api/engagements/${engagement}/connect/preview`, { url: key.mcp_url, api_key: key.api_key }],
      ['POST', actionPath, {}],
    ] as Array<[string, string, unknown?]>) {
      const res = await stack.call(stack.bob, method, path, body)
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`)
    }
  })
})
