import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

interface TaskAnswer {
  id: string
  state: string
  error: string | null
  price_fils: number
  escrow_id: string | null
  output: { text: string | null; data: Record<string, unknown> } | null
  receipt: { id: string } | null
}
interface ApprovalAnswer {
  id: string
  kind: string
  state: string
  task_id: string
  engagement_id: string
  price_fils: number
  text_preview: string
  question: string | null
  agent_state: string | null
  decided_by: string | null
  note: string | null
  receipt: { id: string; leaf_hash: string | null } | null
}

const TEXT =
  'Approvals hold a task until a member decides. The approval names the task, its price and its text. Approving runs the task; rejecting ends it without a charge.'

describe('approvals: tasks held for a member’s decision', () => {
  let stack: FullStack
  let did: string
  let viewer: Client
  let member: Client
  let admin: Client
  let always: string

  const call = (who: Client, method: string, path: string, body?: unknown) =>
    stack.call(who, method, path, body)
  const task = async (id: string) =>
    (await call(stack.alice, 'GET', `/api/tasks/${id}`)).body as unknown as TaskAnswer
  const settled = async (id: string, state: string) => {
    await eventually(`task ${id} is ${state}`, async () => (await task(id)).state === state)
    return task(id)
  }
  const approval = async (id: string, who = stack.alice) => {
    const res = await call(who, 'GET', `/api/approvals/${id}`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as ApprovalAnswer
  }
  const approvalOfTask = async (taskId: string) => {
    const res = await call(stack.alice, 'GET', '/api/approvals?limit=100')
    assert.equal(res.status, 200, res.text)
    const found = (res.body.approvals as ApprovalAnswer[]).find((a) => a.task_id === taskId)
    assert.ok(found, `an approval for ${taskId}: ${res.text}`)
    return found
  }
  const post = async (engagement: string, text = TEXT, async = false) => {
    const res = await call(stack.alice, 'POST', '/api/tasks', { engagement_id: engagement, text, async })
    assert.equal(res.status, 200, res.text)
    return (res.body as { task: TaskAnswer }).task
  }
  const receipts = async (subject: string) => {
    const { rows } = await sql<{ receipt_type: string }>`
      select receipt_type from receipt_outbox where subject = ${subject} order by receipt_type
    `.execute(stack.db)
    return rows.map((r) => r.receipt_type)
  }
  const events = async (stream: string) => {
    const { rows } = await sql<{ type: string; data: Record<string, unknown> }>`
      select type, data from rental_events where stream = ${stream} order by stream_seq
    `.execute(stack.db)
    return rows
  }
  const configure = async (engagement: string, approvalPolicy: unknown) => {
    const res = await call(stack.alice, 'POST', `/api/engagements/${engagement}/config`, {
      approval: approvalPolicy,
    })
    assert.equal(res.status, 200, res.text)
  }
  const hire = () => stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
  const code = (res: { body: Record<string, unknown> }) => (res.body.error as { code: string }).code
  const message = (res: { body: Record<string, unknown> }) => (res.body.error as { message: string }).message

  before(async () => {
    stack = await startFullStack()
    did = await stack.agentOf('job_summary')
    always = await hire()
    for (const [email, role] of [
      ['vera@example.test', 'viewer'],
      ['mia@example.test', 'member'],
      ['ada@example.test', 'admin'],
    ] as const) {
      const invited = await call(stack.alice, 'POST', '/api/org/members', { email, role })
      assert.equal(invited.status, 201, invited.text)
    }
    viewer = await stack.signInWith('vera@example.test')
    member = await stack.signInWith('mia@example.test')
    admin = await stack.signInWith('ada@example.test')
  })
  after(async () => {
    await stack.close()
  })

  it('the policy is validated strictly: unknown keys, a missing above_fils and a bad expires_s are 400', async () => {
    for (const bad of [
      { mode: 'always', later: true },
      { mode: 'above_price' },
      { mode: 'always', expires_s: 0 },
      { mode: 'always', expires_s: 1.5 },
    ]) {
      const res = await call(stack.alice, 'POST', `/api/engagements/${always}/config`, { approval: bad })
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`)
    }
    await configure(always, { mode: 'always' })
  })

  let approved: ApprovalAnswer
  it('a held task waits in input-required, is listed, and runs once approved, with its receipts', async () => {
    const held = await post(always)
    assert.equal(held.state, 'input-required')
    const pending = await call(stack.alice, 'GET', '/api/approvals?state=pending')
    assert.equal(pending.status, 200, pending.text)
    const listed = (pending.body.approvals as ApprovalAnswer[]).find((a) => a.task_id === held.id)!
    assert.ok(listed, pending.text)
    assert.equal(listed.kind, 'policy')
    assert.equal(listed.state, 'pending')
    assert.equal(listed.engagement_id, always)
    assert.equal(listed.text_preview, TEXT.slice(0, 200))
    assert.ok(listed.price_fils > 0)
    // the task does not run while it waits
    assert.equal((await task(held.id)).state, 'input-required')

    const res = await call(stack.alice, 'POST', `/api/approvals/${listed.id}/approve`, { note: 'fine by me' })
    assert.equal(res.status, 200, res.text)
    approved = res.body as unknown as ApprovalAnswer
    assert.equal(approved.state, 'approved')
    assert.equal(approved.note, 'fine by me')
    assert.equal(approved.decided_by, stack.alice.me.organization.member_id)
    assert.ok(approved.receipt?.leaf_hash)
    const done = await settled(held.id, 'completed')
    assert.ok(done.receipt?.id)
    assert.deepEqual(await receipts(held.id), ['task.completed'])
    assert.deepEqual(await receipts(listed.id), ['approval.approved'])
    const stream = await events(held.id)
    assert.deepEqual(
      stream.slice(0, 4).map((e) => e.type),
      ['task.created', 'approval.requested', 'approval.approved', 'task.state_changed'],
    )
    assert.equal(stream[0]!.data.state, 'input-required')
    assert.deepEqual([stream[3]!.data.from, stream[3]!.data.to], ['input-required', 'submitted'])
  })

  it('approving twice, or rejecting an approved approval, is 409 naming its state', async () => {
    for (const verb of ['approve', 'reject']) {
      const res = await call(stack.alice, 'POST', `/api/approvals/${approved.id}/${verb}`)
      assert.equal(res.status, 409, res.text)
      assert.equal(code(res), 'approval_not_pending')
      assert.match(message(res), /approved/)
    }
  })

  it('a rejected task ends as rejected: no charge, no completion receipt, a receipt of the rejection', async () => {
    const engagement = await hire()
    await configure(engagement, { mode: 'above_price', above_fils: 0 })
    const held = await post(engagement)
    assert.equal(held.state, 'input-required')
    const pending = await approvalOfTask(held.id)
    const res = await call(stack.alice, 'POST', `/api/approvals/${pending.id}/reject`, { note: 'not now' })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.state, 'rejected')
    const rejected = await task(held.id)
    assert.equal(rejected.state, 'rejected')
    assert.match(rejected.error ?? '', /rejected: not now/)
    assert.equal(rejected.receipt, null)
    assert.deepEqual(await receipts(held.id), [])
    assert.deepEqual(await receipts(pending.id), ['approval.rejected'])
    // its escrow (the package's, funded at hire) stays as it was: nothing to release for it
    const releases = await call(stack.alice, 'GET', `/api/engagements/${engagement}/releases/pending`)
    assert.equal(releases.status, 200, releases.text)
    assert.ok(
      !(releases.body.releases as Array<{ escrow: { task_id: string } }>).some(
        (r) => r.escrow.task_id === held.id,
      ),
    )
    const cancel = await call(stack.alice, 'POST', `/api/tasks/${held.id}/cancel`)
    assert.equal(cancel.status, 409, cancel.text)
    assert.match(message(cancel), /rejected/)
    // a price at the threshold is not above it: not held
    await configure(engagement, { mode: 'above_price', above_fils: held.price_fils })
    const free = await post(engagement, TEXT, true)
    assert.equal(free.state, 'submitted')
    await settled(free.id, 'completed')
  })

  it('a concurrent approve and reject settle on one outcome', async () => {
    const held = await post(always, TEXT, true)
    const pending = await approvalOfTask(held.id)
    const answers = await Promise.all(
      ['approve', 'reject'].map((verb) => call(stack.alice, 'POST', `/api/approvals/${pending.id}/${verb}`)),
    )
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409], answers.map((a) => a.text).join('\n'))
    const winner = answers.find((a) => a.status === 200)!.body.state as string
    const now = await approval(pending.id)
    assert.equal(now.state, winner)
    await settled(held.id, winner === 'approved' ? 'completed' : 'rejected')
    assert.deepEqual(await receipts(pending.id), [`approval.${winner}`])
  })

  it('a concurrent cancel and reject of a waiting task settle on one outcome', async () => {
    const held = await post(always)
    const pending = await approvalOfTask(held.id)
    const [cancel, reject] = await Promise.all([
      call(stack.alice, 'POST', `/api/tasks/${held.id}/cancel`),
      call(stack.alice, 'POST', `/api/approvals/${pending.id}/reject`),
    ])
    assert.deepEqual([cancel.status, reject.status].sort(), [200, 409], `${cancel.text}\n${reject.text}`)
    const ended = await task(held.id)
    const decided = await approval(pending.id)
    if (cancel.status === 200) {
      assert.equal(ended.state, 'canceled')
      assert.equal(decided.state, 'canceled')
      assert.match(message(reject), /canceled/)
    } else {
      assert.equal(ended.state, 'rejected')
      assert.equal(decided.state, 'rejected')
      assert.match(message(cancel), /rejected/)
    }
  })

  it('an approval past its time reads expired before any sweep, and approving it is 409', async () => {
    const held = await post(always)
    const pending = await approvalOfTask(held.id)
    // time passes (the expiry job is due in 24 h: only the read can say expired now)
    await sql`update approvals set expires_at = now() - interval '1 second' where id = ${pending.id}`.execute(
      stack.db,
    )
    assert.equal((await approval(pending.id)).state, 'expired')
    const expired = await call(stack.alice, 'GET', '/api/approvals?state=expired')
    assert.ok(
      (expired.body.approvals as ApprovalAnswer[]).some((a) => a.id === pending.id),
      expired.text,
    )
    const stillPending = await call(stack.alice, 'GET', '/api/approvals?state=pending')
    assert.ok(!(stillPending.body.approvals as ApprovalAnswer[]).some((a) => a.id === pending.id))
    const res = await call(stack.alice, 'POST', `/api/approvals/${pending.id}/approve`)
    assert.equal(res.status, 409, res.text)
    assert.match(message(res), /expired/)
    // the late decision settled the expiry: the task did not run
    const ended = await task(held.id)
    assert.equal(ended.state, 'rejected')
    assert.match(ended.error ?? '', /expired/)
    assert.deepEqual(await receipts(pending.id), ['approval.expired'])
  })

  it('the expiry job ends an unanswered approval and its task, with event and receipt', async () => {
    const engagement = await hire()
    await configure(engagement, { mode: 'always', expires_s: 1 })
    const held = await post(engagement)
    const pending = await approvalOfTask(held.id)
    await eventually('the expiry job settled the approval', async () => {
      const { rows } = await sql<{
        state: string
      }>`select state from approvals where id = ${pending.id}`.execute(stack.db)
      return rows[0]?.state === 'expired'
    })
    assert.equal((await task(held.id)).state, 'rejected')
    assert.deepEqual(await receipts(pending.id), ['approval.expired'])
    assert.ok((await events(held.id)).some((e) => e.type === 'approval.expired'))
    const res = await call(stack.alice, 'POST', `/api/approvals/${pending.id}/approve`)
    assert.equal(res.status, 409, res.text)
    assert.match(message(res), /expired/)
  })

  it('canceling a waiting task cancels its approval', async () => {
    const held = await post(always)
    const pending = await approvalOfTask(held.id)
    const cancel = await call(stack.alice, 'POST', `/api/tasks/${held.id}/cancel`)
    assert.equal(cancel.status, 200, cancel.text)
    assert.equal(cancel.body.state, 'canceled')
    assert.equal((await approval(pending.id)).state, 'canceled')
    const res = await call(stack.alice, 'POST', `/api/approvals/${pending.id}/approve`)
    assert.equal(res.status, 409, res.text)
    assert.match(message(res), /canceled/)
    assert.ok((await events(held.id)).some((e) => e.type === 'approval.canceled'))
    assert.deepEqual(await receipts(pending.id), [])
  })

  it('roles and organizations: viewers and members read, only owners and admins decide; another organization sees nothing', async () => {
    const held = await post(always)
    const pending = await approvalOfTask(held.id)
    for (const who of [viewer, member]) {
      assert.equal((await approval(pending.id, who)).id, pending.id)
      const res = await call(who, 'POST', `/api/approvals/${pending.id}/approve`)
      assert.equal(res.status, 403, res.text)
      assert.equal(code(res), 'forbidden')
      assert.match(message(res), /approvals:write/)
    }
    for (const [method, path] of [
      ['GET', ''],
      ['POST', '/approve'],
      ['POST', '/reject'],
    ] as const) {
      const res = await call(stack.bob, method, `/api/approvals/${pending.id}${path}`)
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`)
      assert.equal(code(res), 'approval_not_found')
    }
    const bobs = await call(stack.bob, 'GET', '/api/approvals')
    assert.equal(bobs.status, 200, bobs.text)
    assert.deepEqual(bobs.body.approvals, [])
    // bad input: checked before anything changes
    for (const [path, body] of [
      ['/approve', { note: 'x'.repeat(1001) }],
      ['/approve', { note: 'ok', extra: 1 }],
      ['/approve', { text: 'a policy approval takes no answer' }],
      ['/reject', { text: 'no answer on reject' }],
    ] as const) {
      const res = await call(stack.alice, 'POST', `/api/approvals/${pending.id}${path}`, body)
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body).slice(0, 40)}: ${res.text}`)
    }
    assert.equal((await call(stack.alice, 'GET', '/api/approvals/tsk_not-an-approval')).status, 400)
    assert.equal((await call(stack.alice, 'GET', '/api/approvals?state=maybe')).status, 400)
    assert.equal((await approval(pending.id)).state, 'pending')
    assert.equal((await call(stack.alice, 'POST', `/api/approvals/${pending.id}/reject`)).status, 200)
  })

  it('an agent asking for input (A2A input-required) waits on an approval whose answer it receives', async () => {
    const engagement = await hire()
    const held = await post(engagement, `${TEXT} [confirm]`, true)
    await settled(held.id, 'input-required')
    const asked = await approvalOfTask(held.id)
    assert.equal(asked.kind, 'agent_input')
    assert.equal(asked.agent_state, 'input-required')
    assert.match(asked.question ?? '', /Confirm/)
    // the A2A surface shows the same state to the client's own software
    const token = (await call(stack.alice, 'POST', '/api/tokens', { label: 'approvals' })).body
      .token as string
    const rpc = await fetch(`${stack.rental.url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: held.id } }),
    })
    const got = (await rpc.json()) as { result: { status: { state: string } } }
    assert.equal(got.result.status.state, 'TASK_STATE_INPUT_REQUIRED', JSON.stringify(got))

    const res = await call(stack.alice, 'POST', `/api/approvals/${asked.id}/approve`, { text: 'yes, go on' })
    assert.equal(res.status, 200, res.text)
    const done = await settled(held.id, 'completed')
    assert.equal(done.output?.data.confirmation, 'yes, go on')
    assert.ok(done.receipt?.id)
    assert.deepEqual(await receipts(asked.id), ['approval.approved'])
    const stream = await events(held.id)
    const types = stream.map((e) => e.type)
    assert.ok(types.includes('approval.requested') && types.includes('approval.approved'), types.join())
    assert.ok(stream.some((e) => e.type === 'task.state_changed' && e.data.to === 'input-required'))
  })

  it('four eyes (separate_approver): the member who made a held task cannot approve it, another can', async () => {
    const engagement = await hire()
    await configure(engagement, { mode: 'always', separate_approver: true })
    const config = await call(stack.alice, 'GET', `/api/engagements/${engagement}/config`)
    assert.equal((config.body.approval as { separate_approver?: boolean }).separate_approver, true)
    const held = await post(engagement)
    const asked = await approvalOfTask(held.id)
    const own = await call(stack.alice, 'POST', `/api/approvals/${asked.id}/approve`, {})
    assert.equal(own.status, 403, own.text)
    assert.equal(code(own), 'approval_self_decision')
    assert.equal((await approval(asked.id)).state, 'pending')
    const other = await call(admin, 'POST', `/api/approvals/${asked.id}/approve`, {})
    assert.equal(other.status, 200, other.text)
    assert.equal((await settled(held.id, 'completed')).state, 'completed')
    // rejecting one's own task stays allowed; without the option (the default) one approves one's own
    const second = await post(engagement)
    const rejected = await call(
      stack.alice,
      'POST',
      `/api/approvals/${(await approvalOfTask(second.id)).id}/reject`,
      {},
    )
    assert.equal(rejected.status, 200, rejected.text)
    await configure(engagement, { mode: 'always' })
    const third = await post(engagement)
    const mine = await call(
      stack.alice,
      'POST',
      `/api/approvals/${(await approvalOfTask(third.id)).id}/approve`,
      {},
    )
    assert.equal(mine.status, 200, mine.text)
  })
})
