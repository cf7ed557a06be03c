import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { sql } from 'kysely'
import { storeToolCredential } from '../support/connect-client.ts'
import { ToolServers } from '../../src/areas/connect/mcp-client.ts'
import { type Answer, type FullStack, startFullStack } from '../support/full-stack.ts'
import { type LocalPages, PAGE, startLocalPages } from './local-pages.ts'
import { ADMIN, eventually } from '../support/stack.ts'

const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code

describe('connect with idp tokens, held calls read later, tool actions among executions', () => {
  let s: FullStack
  let did: string
  let mcpUrl: string
  let engagement: string
  const call = (method: string, path: string, body?: unknown, who = s.alice): Promise<Answer> =>
    s.call(who, method, path, body)
  const hire = () => s.hireAndSign(s.alice, 'job_notes', did, s.newClientKey())
  const asAgent = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${s.rental.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }))
  /** A task held by its engagement's policy (input-required) keeps its credential live. */
  const heldTask = async (eng: string) => {
    const config = await call('POST', `/api/engagements/${eng}/config`, {
      approval: { mode: 'above_price', above_fils: 0 },
    })
    assert.equal(config.status, 200, config.text)
    const posted = await call('POST', '/api/tasks', { engagement_id: eng, text: 'held' })
    const taskId = (posted.body.task as { id: string }).id
    return { taskId, token: await storeToolCredential(s, taskId, eng) }
  }

  before(async () => {
    s = await startFullStack(
      { RENTAL_CONNECT_TIMEOUT_MS: '4000' },
      { agentsEnv: { AGENTS_TOOL_WAIT_MS: '15000' } },
    )
    did = await s.agentOf('job_notes')
    mcpUrl = `${s.agents.url}/tools/notes/mcp`
    engagement = await hire()
  })
  after(async () => s?.close())

  it('the demo notes server publishes its RFC 9728 metadata and names it in its 401', async () => {
    const res = await fetch(mcpUrl, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(res.status, 401)
    const challenge = res.headers.get('www-authenticate') ?? ''
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1]
    assert.equal(metadataUrl, `${s.agents.url}/.well-known/oauth-protected-resource/tools/notes/mcp`)
    const metadata = (await (await fetch(metadataUrl!)).json()) as Record<string, unknown>
    assert.equal(metadata.resource, mcpUrl)
    assert.deepEqual(metadata.authorization_servers, [s.idp.url])
  })

  it('binding with auth idp_resource: an unregistered resource is 400; registered, the idp’s token reaches the tools and nothing secret is stored', async () => {
    const body = { url: mcpUrl, auth: { type: 'idp_resource' } }
    const unregistered = await call('POST', `/api/engagements/${engagement}/connect/preview`, body)
    assert.equal(unregistered.status, 400, unregistered.text)
    assert.equal(codeOf(unregistered), 'tool_server_refused')
    assert.match(unregistered.text, /invalid_target/)
    // the client registers its tool server at the idp as a resource (here by the operator)
    const registered = await fetch(`${s.idp.url}/manage/v1/resources`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ identifier: mcpUrl, name: 'demo notes', mcp: true }),
    })
    assert.equal(registered.status, 201, await registered.text())
    const preview = await call('POST', `/api/engagements/${engagement}/connect/preview`, body)
    assert.equal(preview.status, 200, preview.text)
    assert.equal(preview.body.resource, mcpUrl)
    assert.deepEqual(
      (preview.body.tools as Array<{ name: string }>).map((t) => t.name),
      ['notes.list', 'notes.create', 'notes.delete', 'notes.wait'],
    )
    const both = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
      ...body,
      api_key: 'nk_write_something',
    })
    assert.equal(both.status, 400, both.text)
    const none = await call('POST', `/api/engagements/${engagement}/connect/preview`, { url: mcpUrl })
    assert.equal(none.status, 400, none.text)
    const bound = await call('POST', `/api/engagements/${engagement}/connect`, body)
    assert.equal(bound.status, 201, bound.text)
    assert.equal(bound.body.auth_mode, 'idp_resource')
    assert.equal(bound.body.resource, mcpUrl)
    assert.equal(bound.body.key_hint, null)
    const { rows } = await sql<{
      key_sealed: Buffer | null
    }>`select key_sealed from connections where engagement_id = ${engagement}`.execute(s.db)
    assert.equal(rows[0]!.key_sealed, null)
  })

  let heldAction = ''
  let heldToken = ''
  it('an agent’s call is made with the idp’s token; a held call is read later at GET /api/connect/calls/{id}', async () => {
    const { token, taskId } = await heldTask(engagement)
    heldToken = token
    const listed = await asAgent(token, 'POST', '/api/connect/calls', {
      tool: 'notes.list',
      arguments: { limit: 1 },
    })
    assert.equal(listed.status, 200, JSON.stringify(listed))
    assert.equal(listed.body.state, 'completed')
    const created = await asAgent(token, 'POST', '/api/connect/calls', {
      tool: 'notes.create',
      arguments: { title: 'from the idp path' },
    })
    assert.equal(created.status, 202, JSON.stringify(created))
    heldAction = created.body.id as string
    const waiting = await asAgent(token, 'GET', `/api/connect/calls/${heldAction}`)
    assert.equal(waiting.status, 200, JSON.stringify(waiting))
    assert.equal(waiting.body.state, 'pending_approval')
    assert.equal(waiting.body.result, null)
    const approved = await call('POST', `/api/approvals/${created.body.approval_id}/approve`, {})
    assert.equal(approved.status, 200, approved.text)
    await eventually('the approved call is made', async () => {
      const now = await asAgent(token, 'GET', `/api/connect/calls/${heldAction}`)
      return now.body.state === 'completed'
    })
    const done = await asAgent(token, 'GET', `/api/connect/calls/${heldAction}`)
    const result = done.body.result as { structuredContent: { note: { title: string } } }
    assert.equal(result.structuredContent.note.title, 'from the idp path')
    // the token's client has its notebook at the server: the note is there
    const again = await asAgent(token, 'POST', '/api/connect/calls', { tool: 'notes.list' })
    const notes = (again.body.result as { structuredContent: { notes: Array<{ title: string }> } })
      .structuredContent.notes
    assert.ok(notes.some((n) => n.title === 'from the idp path'))
    // the idp's token is not the client's either: the demo server refuses a token for another audience
    const client = new McpClient({ name: 't', version: '1' })
    await assert.rejects(
      client.connect(
        new StreamableHTTPClientTransport(new URL(mcpUrl), {
          requestInit: { headers: { authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.' } },
        }),
      ),
    )
    assert.ok(taskId)
  })

  it('the note-taker waits for its held call: approved meanwhile, it answers the call’s outcome', async () => {
    const eng = await hire()
    const bound = await call('POST', `/api/engagements/${eng}/connect`, {
      url: mcpUrl,
      auth: { type: 'idp_resource' },
    })
    assert.equal(bound.status, 201, bound.text)
    const posting = call('POST', '/api/tasks', { engagement_id: eng, text: 'Waited for\nuntil approved' })
    let approvalId = ''
    await eventually('the note-taker’s write is held', async () => {
      const held = await call('GET', `/api/engagements/${eng}/connect/approvals`)
      approvalId = (held.body.actions as Array<{ approval_id: string }> | undefined)?.[0]?.approval_id ?? ''
      return approvalId !== ''
    })
    assert.equal((await call('POST', `/api/approvals/${approvalId}/approve`, {})).status, 200)
    const id = ((await posting).body.task as { id: string }).id
    await eventually('the task ends', async () =>
      ['completed', 'failed'].includes((await call('GET', `/api/tasks/${id}`)).body.state as string),
    )
    const task = (await call('GET', `/api/tasks/${id}`)).body as {
      output: { text: string; data: { calls: Array<{ state: string; waited?: boolean }> } }
    }
    const created = task.output.data.calls[1]!
    assert.equal(created.state, 'completed', JSON.stringify(task.output))
    assert.equal(created.waited, true)
    assert.match(task.output.text, /completed after the client’s decision/)
  })

  it('another task’s credential, an unknown id, no credential: 404 or 401', async () => {
    const other = await hire()
    await call('POST', `/api/engagements/${other}/connect`, { url: mcpUrl, auth: { type: 'idp_resource' } })
    const { token } = await heldTask(other)
    const foreign = await asAgent(token, 'GET', `/api/connect/calls/${heldAction}`)
    assert.equal(foreign.status, 404, JSON.stringify(foreign))
    assert.equal(codeOf(foreign), 'action_not_found')
    const unknown = await asAgent(heldToken, 'GET', '/api/connect/calls/act_AAAAAAAAAAAAAAAA')
    assert.equal(unknown.status, 404)
    const res = await fetch(`${s.rental.url}/api/connect/calls/${heldAction}`)
    assert.equal(res.status, 401)
  })

  it('GET /v1/executions lists tasks and tool actions, newest first across both, filtered and paged by cursor', async () => {
    type Execution = {
      kind: string
      id: string
      created_at: string
      tool: string | null
      task_id: string | null
    }
    const all = await call('GET', `/v1/executions?engagement=${engagement}&limit=100`)
    assert.equal(all.status, 200, all.text)
    const rows = all.body.executions as Execution[]
    const kinds = new Set(rows.map((r) => r.kind))
    assert.deepEqual([...kinds].sort(), ['task', 'tool_action'])
    const action = rows.find((r) => r.id === heldAction)!
    assert.equal(action.tool, 'notes.create')
    assert.ok(rows.some((r) => r.kind === 'task' && r.id === action.task_id))
    const times = rows.map((r) => Date.parse(r.created_at))
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
    )
    // two at a time: the same rows, in the same order, with no repeat
    const paged: Execution[] = []
    let cursor: string | null = null
    do {
      const page: Answer = await call(
        'GET',
        `/v1/executions?engagement=${engagement}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      )
      assert.equal(page.status, 200, page.text)
      paged.push(...(page.body.executions as Execution[]))
      cursor = page.body.next_cursor as string | null
    } while (cursor)
    assert.deepEqual(
      paged.map((r) => r.id),
      rows.map((r) => r.id),
    )
    const actions = await call('GET', `/v1/executions?kind=tool_action&state=completed&limit=100`)
    const only = actions.body.executions as Array<Execution & { state: string }>
    assert.ok(only.length >= 3, actions.text)
    assert.ok(only.every((r) => r.kind === 'tool_action' && r.state === 'completed'))
    const tasks = await call('GET', `/v1/executions?kind=task&engagement=${engagement}`)
    assert.ok((tasks.body.executions as Execution[]).every((r) => r.kind === 'task'))
    assert.equal((await call('GET', '/v1/executions?kind=other')).status, 400)
  })

  describe('the web tool: pages fetched through the rental under the web and egress policies', () => {
    let pages: LocalPages
    let summaryEngagement = ''
    const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
    before(async () => {
      pages = await startLocalPages(s.idp.url)
      summaryEngagement = await s.hireAndSign(
        s.alice,
        'job_summary',
        await s.agentOf('job_summary'),
        s.newClientKey(),
      )
    })
    after(() => pages.close())
    const page = (path: string) => pages.url(path)

    it('the summariser reads a URL with the web tool once the engagement has a web policy: a receipt with the content hash', async () => {
      // the engagement's first task, before any web policy: no web tool in its message
      const before = await call('POST', '/api/tasks', {
        engagement_id: summaryEngagement,
        text: page('/page'),
      })
      assert.equal(before.status, 200, before.text)
      const beforeTask = before.body.task as { state: string; output: { data: Record<string, unknown> } }
      assert.equal(beforeTask.state, 'completed', before.text)
      assert.equal(beforeTask.output.data.fetched, undefined)
      const set = await call('POST', `/api/engagements/${summaryEngagement}/web`, {
        allowed_domains: ['127.0.0.1'],
        denied_domains: ['*.blocked.example'],
        max_fetches_per_task: 2,
        max_bytes: 5000,
      })
      assert.equal(set.status, 200, set.text)
      const posted = await call('POST', '/api/tasks', {
        engagement_id: summaryEngagement,
        text: page('/page'),
      })
      assert.equal(posted.status, 200, posted.text)
      const id = (posted.body.task as { id: string }).id
      await eventually('the task ends', async () =>
        ['completed', 'failed'].includes((await call('GET', `/api/tasks/${id}`)).body.state as string),
      )
      const task = (await call('GET', `/api/tasks/${id}`)).body as {
        state: string
        output: { text: string; data: { fetched: { content_sha256: string; receipt: { id: string } } } }
      }
      assert.equal(task.state, 'completed', JSON.stringify(task))
      assert.match(task.output.text, /harbour/)
      assert.doesNotMatch(task.output.text, /<p>/)
      assert.equal(task.output.data.fetched.content_sha256, sha(PAGE))
      const { rows } = await sql<{
        receipt_type: string
        subject: string
      }>`select receipt_type, subject from receipt_outbox where receipt_type = 'web.fetched'`.execute(s.db)
      assert.equal(rows.length, 1)
      const events = await sql<{ type: string }>`select type from rental_events where stream = ${id}`.execute(
        s.db,
      )
      assert.ok(events.rows.some((e) => e.type === 'web.fetched'))
    })

    it('idp_resource metadata: another resource, another idp, or a metadata host outside egress are refused', async () => {
      const eng = await hire()
      const preview = (path: string) =>
        call('POST', `/api/engagements/${eng}/connect/preview`, {
          url: page(path),
          auth: { type: 'idp_resource' },
        })
      const other = await preview('/mcp-elsewhere')
      assert.equal(other.status, 400, other.text)
      assert.match(other.text, /names the resource http:\/\/127.0.0.1:1\/else, which is not/)
      const foreign = await preview('/mcp-foreign')
      assert.equal(foreign.status, 400, foreign.text)
      assert.match(foreign.text, /not this platform’s idp|not this platform's idp/)
      await call('POST', `/api/engagements/${eng}/egress`, { allow: [{ host: '127.0.0.1' }] })
      const egress = await preview('/mcp-elsewhere')
      assert.equal(egress.status, 403, egress.text)
      assert.equal(codeOf(egress), 'egress_refused')
      assert.match(egress.text, /localhost is outside/)
    })

    it('refuses domains outside the policy, redirects that escape it, egress, and past the fetches per task; bounded in bytes', async () => {
      const { token, taskId } = await heldTask(summaryEngagement)
      const fetchPage = (url: string) => asAgent(token, 'POST', '/api/web/fetch', { url })
      const ok = await fetchPage(page('/hop'))
      assert.equal(ok.status, 200, JSON.stringify(ok))
      assert.equal(ok.body.state, 'fetched')
      assert.equal(ok.body.final_url, page('/page'))
      assert.equal(ok.body.text, PAGE)
      assert.ok(ok.body.receipt)
      const pageHits = () => pages.hits.filter((h) => h === '/page').length
      const reached = pageHits()
      for (const [url, why] of [
        [`http://localhost:${pages.port}/page`, /outside the engagement's allowed web domains/],
        [page('/escape'), /localhost is outside the engagement's allowed web domains/],
        ['http://a.blocked.example/', /denied by the engagement's web policy/],
      ] as const) {
        const refused = await fetchPage(url)
        assert.equal(refused.status, 403, `${url}: ${JSON.stringify(refused)}`)
        assert.equal(codeOf(refused), 'web_refused')
        assert.match((refused.body.error as { message: string }).message, why)
      }
      assert.equal(pageHits(), reached, 'the escape’s target was never fetched')
      // the egress policy too: a host it does not allow is refused before any connection
      await call('POST', `/api/engagements/${summaryEngagement}/egress`, {
        allow: [{ host: 'tools.example.com' }],
      })
      const egress = await fetchPage(page('/page'))
      assert.equal(egress.status, 403, JSON.stringify(egress))
      assert.match((egress.body.error as { message: string }).message, /egress allow-list/)
      await call('POST', `/api/engagements/${summaryEngagement}/egress`, { allow: [{ host: '127.0.0.1' }] })
      const big = await fetchPage(page('/big'))
      assert.equal(big.status, 200, JSON.stringify(big))
      assert.equal(big.body.state, 'failed')
      assert.match(big.body.error as string, /more than 5000 bytes/)
      const spent = await fetchPage(page('/page'))
      assert.equal(spent.status, 403, JSON.stringify(spent))
      assert.match((spent.body.error as { message: string }).message, /fetched its 2 page\(s\) already/)
      const events = await sql<{
        type: string
      }>`select type from rental_events where stream = ${taskId} and type like 'web.%' order by stream_seq`.execute(
        s.db,
      )
      assert.deepEqual(
        events.rows.map((e) => e.type),
        [
          'web.fetched',
          'web.refused',
          'web.refused',
          'web.refused',
          'web.refused',
          'web.failed',
          'web.refused',
        ],
      )
      assert.equal((await asAgent(token, 'POST', '/api/web/fetch', { url: 'not a url' })).status, 400)
      const none = await fetch(`${s.rental.url}/api/web/fetch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: page('/page') }),
      })
      assert.equal(none.status, 401)
    })
  })

  it('outside development a tool server’s name resolving to 127.0.0.1 is refused before any connection', async () => {
    const servers = new ToolServers({ allowPrivate: false, timeoutMs: 2000 })
    await assert.rejects(
      servers.listTools('https://localhost:1/mcp', 'nk_x'),
      /127\.0\.0\.1, not a public address|not a public address/,
    )
    await assert.rejects(servers.resourceOf('https://localhost:1/mcp'), /not a public address/)
    await assert.rejects(servers.listTools('http://example.com/mcp', 'nk_x'), /must be https/)
  })
})
