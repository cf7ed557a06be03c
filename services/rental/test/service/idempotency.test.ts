import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { b64uEncode } from '@svc/trust/base64url'
import { signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { type Answer, type FullStack, startFullStack } from '../support/full-stack.ts'
import { newTask } from '../support/money-actions.ts'

const codeOf = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code

/**
 * Every creating write a client may resend takes an Idempotency-Key (kit idempotentRoute): the
 * same key and body answer the first answer and make nothing new; another body is 422; two
 * concurrent requests with one key make one. Counted through the API, as a client would.
 */
describe('rental idempotency keys: tasks, batches, hires, refunds, disputes, insurance, invoices', () => {
  let s: FullStack
  let agentDid = ''
  let keyN = 0

  before(async () => {
    s = await startFullStack()
    agentDid = await s.agentOf('job_summary')
  })
  after(async () => s?.close())

  const newKey = () => `idem-${process.pid}-${++keyN}`

  /** Signs the engagement's offered escrows, then releases every escrow whose task completed. */
  const releaseAll = async (engagementId: string, key: ReturnType<FullStack['newClientKey']>) => {
    const before = await s.call(s.alice, 'GET', `/api/engagements/${engagementId}/releases/pending`)
    const toSign = before.body.escrows_to_sign as Array<{ hash: string; body: unknown }>
    if (toSign.length) {
      const signed = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/signatures`, {
        escrow_signatures: toSign.map((e) => ({
          escrow_hash: e.hash,
          signature: b64uEncode(signEd25519(key.seed, canonicalBytes(e.body))),
        })),
      })
      assert.equal(signed.status, 200, signed.text)
    }
    const pending = await s.call(s.alice, 'GET', `/api/engagements/${engagementId}/releases/pending`)
    const releases = pending.body.releases as Array<{
      escrow: { id: string; hash: string }
      instruction: unknown
    }>
    const escrowIds: string[] = []
    for (const r of releases) {
      const signature = b64uEncode(signEd25519(key.seed, canonicalBytes(r.instruction)))
      const released = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/releases`, {
        escrow_hash: r.escrow.hash,
        instruction: { body: r.instruction, signature },
      })
      assert.equal(released.status, 200, released.text)
      escrowIds.push(r.escrow.id)
    }
    return escrowIds
  }

  /** An active engagement with `tasks` completed tasks whose escrows are released (paid). */
  const paid = async (tasks = 1) => {
    const key = s.newClientKey()
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, key)
    const taskIds: string[] = []
    for (let i = 0; i < tasks; i++) {
      const task = await s.call(s.alice, 'POST', '/api/tasks', {
        engagement_id: engagementId,
        text: `The ledger records every receipt (${i}).`,
      })
      assert.equal(task.status, 200, task.text)
      taskIds.push((task.body.task as { id: string }).id)
    }
    return { engagementId, taskIds, escrowIds: await releaseAll(engagementId, key) }
  }

  /**
   * The three checks of one route: `send(key, other)` posts the request (`other`: another body);
   * `count()` counts what it makes, through the API. `second` makes the concurrent round's request
   * on a fresh object where the route allows one per object.
   */
  const idempotent = async (
    send: (key: string, other?: boolean) => Promise<Answer>,
    count: () => Promise<number>,
    second: (key: string) => Promise<Answer> = send,
  ) => {
    const before = await count()
    const key = newKey()
    const first = await send(key)
    assert.ok(first.status >= 200 && first.status < 300, first.text)
    assert.equal(await count(), before + 1)
    // a resend (after a 503, a cut connection): the first answer, nothing new
    const again = await send(key)
    assert.equal(again.status, first.status, again.text)
    assert.deepEqual(again.body, first.body)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.equal(await count(), before + 1)
    // the key with another body
    const reused = await send(key, true)
    assert.deepEqual([reused.status, codeOf(reused)], [422, 'idempotency_key_reused'], reused.text)
    assert.equal(await count(), before + 1)
    // two at once with one key: one write, one answer
    const both = newKey()
    const [a, b] = await Promise.all([second(both), second(both)])
    assert.ok(a.status >= 200 && a.status < 300, a.text)
    assert.equal(b.status, a.status, b.text)
    assert.deepEqual(b.body, a.body)
    assert.equal(await count(), before + 2)
    return first
  }
  const post = (path: string, body: unknown, key: string) =>
    s.call(s.alice, 'POST', path, body, { headers: { 'idempotency-key': key } })
  const total = async (path: string, list: string) => {
    const res = await s.call(s.alice, 'GET', path)
    assert.equal(res.status, 200, res.text)
    return (res.body[list] as unknown[]).length
  }

  it('POST /api/tasks: a resend makes no second task (nor escrow)', async () => {
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const count = () => total('/api/tasks?limit=100', 'tasks')
    const escrows = async () =>
      (
        (await s.call(s.alice, 'GET', `/api/engagements/${engagementId}`)).body.engagement as {
          escrows: unknown[]
        }
      ).escrows.length
    const escrowsBefore = await escrows()
    await idempotent(
      (key, other) =>
        post('/api/tasks', { engagement_id: engagementId, text: other ? 'Another text.' : 'One text.' }, key),
      count,
    )
    // the package's escrow, then one offered escrow for the second task made
    assert.equal(await escrows(), escrowsBefore + 1)
  })

  it('POST /api/batches: a resend makes no second batch', async () => {
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    await idempotent(
      (key, other) => post('/api/batches', { engagement_id: engagementId, items: [other ? 'b' : 'a'] }, key),
      () => total('/api/batches?limit=100', 'batches'),
    )
  })

  it('POST /api/engagements (hire): a resend makes no second engagement', async () => {
    await idempotent(
      (key, other) =>
        post(
          '/api/engagements',
          other
            ? { job_id: 'job_extraction', agent_did: agentDid }
            : { job_id: 'job_summary', agent_did: agentDid },
          key,
        ),
      () => total('/api/engagements?limit=100', 'engagements'),
    )
  })

  it('POST /api/refunds: a resend asks for no second refund', async () => {
    const { escrowIds } = await paid()
    await idempotent(
      (key, other) =>
        post('/api/refunds', { escrow_id: escrowIds[0], amount_fils: other ? 2 : 1, reason: 'Short.' }, key),
      () => total('/api/refunds?limit=100', 'refunds'),
    )
  })

  it('POST /api/disputes: a resend opens no second dispute', async () => {
    const first = await paid()
    const second = await paid()
    await idempotent(
      (key, other) =>
        post(
          '/api/disputes',
          { task_id: first.taskIds[0], amount_fils: other ? 2 : 1, reason: 'Wrong.' },
          key,
        ),
      () => total('/api/disputes?limit=100', 'disputes'),
      (key) => post('/api/disputes', { task_id: second.taskIds[0], amount_fils: 1, reason: 'Wrong.' }, key),
    )
  })

  it('POST /api/engagements/{id}/insurance: a resend starts no second policy nor charges a second premium', async () => {
    // the funds that back the cover: paid work's fees, moved into the reserve by an operator (alice, in development)
    await paid(4)
    const funds = await s.call(s.alice, 'GET', '/api/insurance/funds')
    assert.equal(funds.status, 200, funds.text)
    const fees = (funds.body.fees as { amount_fils: number }).amount_fils
    const moved = await s.call(s.alice, 'POST', '/api/insurance/reserve', { amount_fils: fees })
    assert.equal(moved.status, 201, moved.text)
    // an engagement with money at risk: an escrow opened by a task, not yet released
    const atRisk = async () => {
      const key = s.newClientKey()
      const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, key)
      await newTask(s, s.alice, engagementId, key, 'Insured: the ledger records every receipt.')
      return engagementId
    }
    const one = await atRisk()
    const two = await atRisk()
    const quoteOf = async (engagementId: string) => {
      const quote = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/insurance/quote`, {
        coverage_fils: 200,
      })
      assert.equal(quote.status, 201, quote.text)
      return quote.body.id as string
    }
    const [q1, q1b, q2] = [await quoteOf(one), await quoteOf(one), await quoteOf(two)]
    const premiums = async () => {
      const res = await s.call(s.alice, 'GET', '/api/statements')
      assert.equal(res.status, 200, res.text)
      return (res.body.movements as Array<{ transfer_kind: string }>).filter(
        (m) => m.transfer_kind === 'insurance_premium',
      ).length
    }
    await idempotent(
      (key, other) => post(`/api/engagements/${one}/insurance`, { quote_id: other ? q1b : q1 }, key),
      premiums,
      (key) => post(`/api/engagements/${two}/insurance`, { quote_id: q2 }, key),
    )
  })

  it('POST /api/invoices: a resend issues no second invoice', async () => {
    const first = await paid()
    const second = await paid()
    await idempotent(
      (key, other) =>
        post(
          '/api/invoices',
          other ? { engagement_id: second.engagementId } : { engagement_id: first.engagementId },
          key,
        ),
      () => total('/api/invoices?limit=100', 'invoices'),
      (key) => post('/api/invoices', { engagement_id: second.engagementId }, key),
    )
  })

  it('a request that fails gives its key up: the resend runs again; keys are the organization’s own', async () => {
    const clientKey = s.newClientKey()
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, clientKey)
    const key = newKey()
    const task = await post('/api/tasks', { engagement_id: engagementId, text: 'Once.' }, key)
    assert.equal(task.status, 200, task.text)
    // nothing released to invoice yet: 409, and the key is not kept
    const invoiceKey = newKey()
    const early = await post('/api/invoices', { engagement_id: engagementId }, invoiceKey)
    assert.deepEqual([early.status, codeOf(early)], [409, 'nothing_to_invoice'], early.text)
    await releaseAll(engagementId, clientKey)
    const later = await post('/api/invoices', { engagement_id: engagementId }, invoiceKey)
    assert.equal(later.status, 201, later.text)
    assert.equal(later.headers.get('idempotent-replayed'), null)
    // bob's organization uses alice's task key for its own task: its own write
    const bobs = await s.hireAndSign(s.bob, 'job_summary', agentDid, s.newClientKey())
    const other = await s.call(
      s.bob,
      'POST',
      '/api/tasks',
      { engagement_id: bobs, text: 'Once.' },
      { headers: { 'idempotency-key': key } },
    )
    assert.equal(other.status, 200, other.text)
    assert.equal(other.headers.get('idempotent-replayed'), null)
    assert.notEqual((other.body.task as { id: string }).id, (task.body.task as { id: string }).id)
  })
})
