import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { isProviderOf } from '../../src/areas/catalogue/store.ts'
import { type Answer, type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

interface AuditEvent {
  id: string
  seq: number
  type: string
  subjects: Record<string, string>
  actor: { type: string; id: string | null; ip: string | null; request_id: string | null }
  data: {
    method: string
    route: string | null
    params?: Record<string, string>
    rpc_method?: string
    status: number
    outcome: string
    error_code: string | null
    rpc_code?: number
    duration_ms: number
  }
}

const errorCode = (res: Answer) => (res.body.error as { code: string } | undefined)?.code

describe('the audit record (every S+C call and mutating A2A call, with its actor, IP, request id and outcome), providers, operators', () => {
  let stack: FullStack
  let token = ''
  let tokenId = ''
  let engagement = ''
  let agentDid = ''

  const requestId = (res: { headers: Headers }) => res.headers.get('x-request-id')!
  const audit = async (who: Client, query = '') => {
    const res = await stack.call(who, 'GET', `/api/audit${query}`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as { events: AuditEvent[]; next_before: number | null }
  }
  /** The request record of a request id, once written (it is written after the answer). */
  const recordOf = async (who: Client, id: string) => {
    let found: AuditEvent | undefined
    await eventually(`the record of ${id}`, async () => {
      found = (await audit(who, '?type=request.answered&limit=100')).events.find(
        (e) => e.actor.request_id === id,
      )
      return found !== undefined
    })
    return found!
  }
  const rpc = (body: unknown) =>
    fetch(`${stack.rental.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    })

  before(async () => {
    stack = await startFullStack({
      // an operator by email (verified at the idp), one by subject (bob's), one by an unverified email
      RENTAL_OPERATORS: 'demo@svc.local,another-client,unverified@example.test',
    })
    agentDid = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', agentDid, stack.newClientKey())
    const made = await stack.call(stack.alice, 'POST', '/api/tokens', { label: 'audited' })
    assert.equal(made.status, 201, made.text)
    token = made.body.token as string
    tokenId = made.body.id as string
  })
  after(async () => stack?.close())

  it('records S+C calls that succeed and that are refused, with the user, IP, request id, route and outcome', async () => {
    const ok = await stack.call(stack.alice, 'POST', '/api/tokens', { label: 'label-zq81' })
    assert.equal(ok.status, 201, ok.text)
    const noCsrf = await stack.call(stack.alice, 'POST', '/api/tokens', { label: 'x' }, { csrf: false })
    assert.equal(noCsrf.status, 403)
    const bad = await stack.call(stack.alice, 'POST', `/api/tokens/${ok.body.id as string}/policy`, {
      nope: 1,
    })
    assert.equal(bad.status, 400, bad.text)

    const okRecord = await recordOf(stack.alice, requestId(ok))
    assert.equal(okRecord.type, 'request.answered')
    assert.deepEqual(okRecord.actor, {
      type: 'user',
      id: stack.alice.me.client.subject,
      ip: '127.0.0.1',
      request_id: requestId(ok),
    })
    assert.equal(okRecord.data.method, 'POST')
    assert.equal(okRecord.data.route, '/api/tokens')
    assert.equal(okRecord.data.status, 201)
    assert.equal(okRecord.data.outcome, 'ok')
    assert.equal(okRecord.data.error_code, null)
    assert.ok(okRecord.data.duration_ms >= 0)

    const csrfRecord = await recordOf(stack.alice, requestId(noCsrf))
    assert.equal(csrfRecord.data.outcome, 'refused')
    assert.equal(csrfRecord.data.status, 403)
    assert.equal(csrfRecord.data.error_code, 'csrf_failed')
    assert.equal(csrfRecord.actor.id, stack.alice.me.client.subject)

    const badRecord = await recordOf(stack.alice, requestId(bad))
    assert.equal(badRecord.data.route, '/api/tokens/:id/policy', 'the route pattern, not the raw URL')
    assert.deepEqual(badRecord.data.params, { id: ok.body.id })
    assert.equal(badRecord.data.outcome, 'refused')
    assert.equal(badRecord.data.error_code, 'invalid_request')
  })

  it('records mutating A2A calls (SendMessage, CancelTask) with the token; reads are not recorded', async () => {
    const sent = await rpc({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: {
        message: {
          messageId: 'm1',
          role: 'ROLE_USER',
          parts: [{ text: 'The audit record keeps who asked for what, from where, and how it ended.' }],
          metadata: { engagement_id: engagement },
        },
        configuration: { returnImmediately: true },
      },
    })
    const sentBody = (await sent.json()) as { result?: { task?: { id: string } } }
    const taskId = sentBody.result?.task?.id
    assert.ok(taskId, JSON.stringify(sentBody))
    const read = await rpc({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: taskId } })
    assert.equal(read.status, 200)
    await read.text()
    // the task ends (completed): a cancel is then refused
    await eventually('the task ends', async () => {
      const res = await rpc({ jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: taskId } })
      const state = ((await res.json()) as { result?: { status?: { state?: string } } }).result?.status?.state
      return state === 'TASK_STATE_COMPLETED' || state === 'TASK_STATE_FAILED'
    })
    const cancel = await rpc({ jsonrpc: '2.0', id: 4, method: 'tasks/cancel', params: { id: taskId } })
    const cancelBody = (await cancel.json()) as { error?: { code: number } }
    assert.equal(cancelBody.error?.code, -32002, JSON.stringify(cancelBody))

    const send = await recordOf(stack.alice, requestId(sent))
    assert.deepEqual(send.actor, { type: 'token', id: tokenId, ip: '127.0.0.1', request_id: requestId(sent) })
    assert.equal(send.data.route, '/a2a')
    assert.equal(send.data.rpc_method, 'SendMessage')
    assert.equal(send.data.outcome, 'ok')
    assert.deepEqual(send.subjects, { engagement_id: engagement, task_id: taskId })

    const canceled = await recordOf(stack.alice, requestId(cancel))
    assert.equal(canceled.data.rpc_method, 'CancelTask', 'the 0.3 name is recorded by its 1.0 name')
    assert.equal(canceled.data.outcome, 'refused')
    assert.equal(canceled.data.rpc_code, -32002)
    assert.equal(canceled.actor.id, tokenId)
    assert.equal(canceled.subjects.task_id, taskId)

    // the read's record would be written by now if it were: the cancel, sent after it, is
    const all = (await audit(stack.alice, '?limit=100')).events
    assert.equal(
      all.some((e) => e.actor.request_id === requestId(read)),
      false,
      'a GetTask is not recorded',
    )
    // the domain event of the change is in the same record
    assert.ok(all.some((e) => e.type === 'task.created' && e.subjects.task_id === taskId))
  })

  it('records a SendStreamingMessage once its stream ends', async () => {
    const streamed = await rpc({
      jsonrpc: '2.0',
      id: 5,
      method: 'SendStreamingMessage',
      params: {
        message: {
          messageId: 'm5',
          role: 'ROLE_USER',
          parts: [
            { text: 'A streamed task is recorded when its stream ends, with the engagement it names.' },
          ],
          metadata: { engagement_id: engagement },
        },
      },
    })
    assert.match(streamed.headers.get('content-type') ?? '', /event-stream/)
    await streamed.text()
    const record = await recordOf(stack.alice, requestId(streamed))
    assert.equal(record.data.rpc_method, 'SendStreamingMessage')
    assert.equal(record.data.outcome, 'ok')
    assert.equal(record.actor.id, tokenId)
    assert.equal(record.subjects.engagement_id, engagement)
  })

  it('shows an organization only its own record, pages by `before`, filters by type, and needs audit:read', async () => {
    const bobs = (await audit(stack.bob, '?limit=100')).events
    const alices = (await audit(stack.alice, '?limit=100')).events
    assert.ok(alices.length > 0)
    assert.equal(
      bobs.some((e) => alices.some((a) => a.seq === e.seq)),
      false,
      'none of alice’s events is bob’s',
    )
    assert.equal(
      bobs.some((e) => e.actor.id === stack.alice.me.client.subject || e.actor.id === tokenId),
      false,
    )
    const first = await audit(stack.alice, '?limit=2')
    assert.equal(first.events.length, 2)
    assert.ok(first.events[0]!.seq > first.events[1]!.seq, 'newest first')
    const next = await audit(stack.alice, `?limit=2&before=${first.next_before!}`)
    assert.ok(next.events.every((e) => e.seq < first.events[1]!.seq))
    const created = await audit(stack.alice, '?type=task.created')
    assert.ok(created.events.length > 0 && created.events.every((e) => e.type === 'task.created'))
    for (const query of ['?before=0', '?before=1e309', '?type=NOT_A_TYPE', '?limit=101', '?other=1']) {
      const res = await stack.call(stack.alice, 'GET', `/api/audit${query}`)
      assert.equal(res.status, 400, `${query}: ${res.text}`)
    }
    // a member's role does not hold audit:read
    const invited = await stack.call(stack.alice, 'POST', '/api/org/members', {
      email: 'member@example.test',
      role: 'member',
    })
    assert.equal(invited.status, 201, invited.text)
    const member = await stack.signInWith('member@example.test')
    const refused = await stack.call(member, 'GET', '/api/audit')
    assert.equal(refused.status, 403)
    assert.match((refused.body.error as { message: string }).message, /audit:read/)
  })

  it('records no body, token, CSRF token or cookie', async () => {
    const { rows } = await sql<{ row: string }>`
      select row_to_json(e)::text as row from rental_events e where type = 'request.answered'
    `.execute(stack.db)
    assert.ok(rows.length >= 5)
    const text = rows.map((r) => r.row).join('\n')
    const cookie = stack.alice.jar.get('rental_session')!
    for (const [name, secret] of [
      ['the CSRF token', stack.alice.csrf],
      ['the agt_ token', token],
      ['the session cookie', cookie],
      ['a message text', 'The audit record keeps who asked'],
      ['a body field', 'label-zq81'],
    ] as const)
      assert.equal(text.includes(secret), false, `${name} is not recorded`)
    assert.equal(text.includes('agt_'), false)
  })

  it('an unauthenticated call has no actor and no record', async () => {
    const res = await fetch(`${stack.rental.url}/api/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"label":"nobody"}',
    })
    assert.equal(res.status, 401)
    const rpcRes = await fetch(`${stack.rental.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer agt_${'A'.repeat(43)}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: 'tsk_x' } }),
    })
    assert.equal(rpcRes.status, 401)
    // a later recorded call is written after both: neither has a record by then
    const later = await stack.call(stack.alice, 'POST', '/api/tokens', { label: 'later' })
    await recordOf(stack.alice, requestId(later))
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from rental_events
      where request_id in (${requestId(res)}, ${requestId(rpcRes)})
    `.execute(stack.db)
    assert.equal(rows[0]!.n, 0)
  })

  it('the built-in agents are published by the platform’s provider organization, shown in the catalogue and the CV', async () => {
    const did = await stack.agentOf('job_summary')
    const jobs = (await stack.call(stack.alice, 'GET', '/api/jobs')).body.jobs as Array<{
      agents: Array<{ did: string; provider: { id: string; name: string } }>
    }>
    const agents = jobs.flatMap((j) => j.agents)
    assert.ok(agents.length > 0)
    for (const agent of agents) assert.deepEqual(agent.provider, { id: 'org_platform', name: 'Platform' })
    await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
    const cv = await stack.call(stack.alice, 'GET', `/api/agents/${did}/cv`)
    assert.equal(cv.status, 200, cv.text)
    assert.deepEqual((cv.body.cv as { provider: unknown }).provider, { id: 'org_platform', name: 'Platform' })
    // the check of providers' actions (later issues)
    assert.equal(await isProviderOf(stack.db, 'org_platform', did), true)
    assert.equal(await isProviderOf(stack.db, stack.alice.me.organization.id, did), false)
    assert.equal(await isProviderOf(stack.db, 'org_platform', 'did:key:z6MkNotInTheCatalogue'), false)
  })

  it('GET /api/admin/operators: operators by subject or verified email only', async () => {
    const listed = await stack.call(stack.alice, 'GET', '/api/admin/operators')
    assert.equal(listed.status, 200, listed.text)
    assert.deepEqual(listed.body.operators, [
      { id: 'demo@svc.local', kind: 'email' },
      { id: 'another-client', kind: 'subject' },
      { id: 'unverified@example.test', kind: 'email' },
    ])
    assert.equal((await stack.call(stack.bob, 'GET', '/api/admin/operators')).status, 200, 'by subject')
    const unverified = await stack.signInWith('unverified@example.test', { verified: false })
    const refused = await stack.call(unverified, 'GET', '/api/admin/operators')
    assert.equal(refused.status, 403, 'an email the idp has not verified does not count')
    assert.equal(errorCode(refused), 'forbidden')
  })
})
