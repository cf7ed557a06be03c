import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { b64uEncode } from '@svc/trust/base64url'
import { type Ed25519KeyPair, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { signedBy } from '../../src/areas/engagements/bodies.ts'
import { JournalRail } from '../../src/areas/rail/journal.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { releaseAndInvoice } from '../support/sweep-objects.ts'

interface Money {
  amount_fils: number
}
interface Dispute {
  id: string
  state: string
  escrow_ids: string[]
  amount: Money
  resolution: null | {
    outcome: string
    client: Money
    provider: Money
    body: Record<string, unknown>
    signature: string
    receipt_id: string
    settlement: { transfers: Record<string, string>; refund_ids: string[] }
  }
}

const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code
const messageOf = (a: { body: Record<string, unknown> }) =>
  (a.body.error as { message?: string } | undefined)?.message ?? ''

describe('rental disputes: frozen escrows, a response, one resolution signed by the provider', () => {
  let s: FullStack
  let operator: Client
  let stranger: Client
  let agentDid = ''
  const rail = new JournalRail()
  const wallet = () => `wallet:${s.alice.me.organization.id}`
  const balance = (account: string) => rail.balance(s.db, account)

  /** An engagement with one completed task whose escrow is held (open, not released). */
  const heldTask = async () => {
    const key = s.newClientKey()
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, key)
    const task = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
    })
    assert.equal(task.status, 200, task.text)
    const taskId = (task.body.task as { id: string }).id
    const escrow = await s.db
      .selectFrom('escrows')
      .select(['id', 'amount_fils', 'state'])
      .where('task_id', '=', taskId)
      .executeTakeFirstOrThrow()
    assert.equal(escrow.state, 'open')
    return { key, engagementId, taskId, escrowId: escrow.id, amount: Number(escrow.amount_fils) }
  }
  /** The client's signed release of the engagement's first pending escrow. */
  const release = async (engagementId: string, key: Ed25519KeyPair) => {
    const pending = await s.call(s.alice, 'GET', `/api/engagements/${engagementId}/releases/pending`)
    const [r] = pending.body.releases as Array<{ escrow: { hash: string }; instruction: unknown }>
    return s.call(s.alice, 'POST', `/api/engagements/${engagementId}/releases`, {
      escrow_hash: r!.escrow.hash,
      instruction: {
        body: r!.instruction,
        signature: b64uEncode(signEd25519(key.seed, canonicalBytes(r!.instruction))),
      },
    })
  }
  const open = async (body: Record<string, unknown>) => {
    const res = await s.call(s.alice, 'POST', '/api/disputes', body)
    assert.equal(res.status, 201, res.text)
    return res.body as unknown as Dispute
  }

  before(async () => {
    s = await startFullStack({ RENTAL_OPERATORS: 'another-client' })
    operator = s.bob
    stranger = await s.signInWith('stranger@disputes.example')
    agentDid = await s.agentOf('job_summary')
  })
  after(async () => s?.close())

  it('a split on a held escrow: frozen (release 409), responded, resolved once; each side paid once; the resolution verifies', async () => {
    const held = await heldTask()
    const leaf = await s.db
      .selectFrom('tasks')
      .select('receipt_leaf_hash')
      .where('id', '=', held.taskId)
      .executeTakeFirstOrThrow()
    const dispute = await open({
      task_id: held.taskId,
      amount_fils: held.amount,
      reason: 'The summary is of another text.',
      evidence: { task_ids: [held.taskId], receipt_leaf_hashes: [leaf.receipt_leaf_hash] },
    })
    assert.equal(dispute.state, 'open')
    assert.deepEqual(dispute.escrow_ids, [held.escrowId])
    // the list names its task for the client, in the asked language
    const listed = (await s.call(s.alice, 'GET', '/api/disputes?lang=ar')).body.disputes as Array<{
      id: string
      job_title: string | null
      agent_name: string | null
    }>
    const named = listed.find((d) => d.id === dispute.id)!
    assert.deepEqual([named.job_title, named.agent_name], ['ملخص مستند', 'الملخِّص'])
    const frozen = await release(held.engagementId, held.key)
    assert.deepEqual([frozen.status, codeOf(frozen)], [409, 'escrow_frozen'], frozen.text)
    assert.match(messageOf(frozen), new RegExp(dispute.id))
    // a second dispute on the same escrow while this one is open
    const twice = await s.call(s.alice, 'POST', '/api/disputes', {
      engagement_id: held.engagementId,
      amount_fils: 1,
      reason: 'again',
    })
    assert.deepEqual([twice.status, codeOf(twice)], [409, 'dispute_open'])
    // the client does not answer for the provider; the operator (as the provider) does
    const own = await s.call(s.alice, 'POST', `/api/disputes/${dispute.id}/respond`, { text: 'fine' })
    assert.deepEqual([own.status, codeOf(own)], [403, 'forbidden'])
    const responded = await s.call(operator, 'POST', `/api/disputes/${dispute.id}/respond`, {
      text: 'The agent summarised what it was given.',
    })
    assert.equal(responded.status, 200, responded.text)
    assert.equal((responded.body as unknown as Dispute).state, 'responded')
    const byClient = await s.call(s.alice, 'POST', `/api/disputes/${dispute.id}/resolve`, {
      outcome: 'client',
    })
    assert.deepEqual([byClient.status, codeOf(byClient)], [403, 'forbidden'])

    const clientPart = Math.floor(held.amount / 2)
    const providerPart = held.amount - clientPart
    const before = { wallet: await balance(wallet()), payout: await balance(`payout:${agentDid}`) }
    const resolved = await s.call(operator, 'POST', `/api/disputes/${dispute.id}/resolve`, {
      outcome: 'split',
      client_fils: clientPart,
      provider_fils: providerPart,
    })
    assert.equal(resolved.status, 200, resolved.text)
    const done = resolved.body as unknown as Dispute
    assert.equal(done.state, 'resolved')
    assert.deepEqual(
      [done.resolution!.client.amount_fils, done.resolution!.provider.amount_fils],
      [clientPart, providerPart],
    )
    // the client got its part back from the escrow, the agent the rest less the fee: once each
    assert.equal(await balance(wallet()), before.wallet + clientPart)
    const payout = (await balance(`payout:${agentDid}`)) - before.payout
    assert.ok(payout > 0 && payout <= providerPart, String(payout))
    assert.equal(await balance(`escrow:${held.escrowId}`), 0)
    const escrow = await s.db
      .selectFrom('escrows')
      .select('state')
      .where('id', '=', held.escrowId)
      .executeTakeFirstOrThrow()
    assert.equal(escrow.state, 'released')
    // the client's part is a settled refund: nothing more is refundable than the provider's part
    const refund = await s.db
      .selectFrom('refunds')
      .selectAll()
      .where('escrow_id', '=', held.escrowId)
      .execute()
    assert.deepEqual(
      refund.map((r) => [r.state, Number(r.amount_fils)]),
      [['settled', clientPart]],
    )
    // invoiced at its whole amount and paid, the client's part taken off by a credit note: nothing owed
    const invoiced = await s.call(s.alice, 'POST', '/api/invoices', { engagement_id: held.engagementId })
    assert.equal(invoiced.status, 201, invoiced.text)
    const inv = invoiced.body as {
      totals: { gross: Money; vat: Money }
      credit_notes: Array<{ gross: Money; vat: Money }>
      balance: Money
      state: string
    }
    assert.deepEqual(
      [
        inv.state,
        inv.totals.gross.amount_fils,
        inv.credit_notes.map((c) => c.gross.amount_fils),
        inv.balance.amount_fils,
      ],
      ['paid', held.amount, [-clientPart], 0],
    )
    // platform:vat got the escrow's VAT less the part's, which the credit note takes back
    const { rows: vatPosted } = await sql<{ amount: string }>`
      select p.amount from rail_postings p join escrows e on e.release_transfer_id = p.transfer_id
      where e.id = ${held.escrowId} and p.account_id = 'platform:vat'`.execute(s.db)
    assert.equal(
      vatPosted.reduce((sum, r) => sum + Number(r.amount), 0),
      inv.totals.vat.amount_fils + inv.credit_notes[0]!.vat.amount_fils,
    )
    // the resolution body is signed by the provider identity, and is the dispute.resolved receipt's
    const { body, signature } = done.resolution!
    const provider = await sql<{ did: string }>`select did from provider_identity`.execute(s.db)
    assert.equal(body.provider_did, provider.rows[0]!.did)
    assert.ok(signedBy(body.provider_did as string, body, signature))
    const receipts = await s.db
      .selectFrom('receipt_outbox')
      .select(['envelope'])
      .where('receipt_type', '=', 'dispute.resolved')
      .where('subject', '=', dispute.id)
      .execute()
    assert.equal(receipts.length, 1)
    const envelope = receipts[0]!.envelope as { receipt: { issuer: string; data: { resolution: unknown } } }
    assert.deepEqual(envelope.receipt.data.resolution, body)
    assert.equal(envelope.receipt.issuer, body.provider_did)
    // the escrow is settled: nothing is left to release, and nothing more is refundable than was paid out
    const pending = await s.call(s.alice, 'GET', `/api/engagements/${held.engagementId}/releases/pending`)
    assert.deepEqual(pending.body.releases, [])
    const more = await s.call(s.alice, 'POST', '/api/refunds', {
      escrow_id: held.escrowId,
      amount_fils: providerPart + 1,
      reason: 'more',
    })
    assert.deepEqual([more.status, codeOf(more)], [400, 'not_refundable'])
    const released = await s.db
      .selectFrom('rental_events')
      .select('data')
      .where('type', '=', 'escrow.released')
      .where(sql<boolean>`subjects->>'escrow_id' = ${held.escrowId}`)
      .execute()
    assert.equal(released.length, 1)
    assert.equal((released[0]!.data as { dispute_id?: string }).dispute_id, dispute.id)
    assert.equal(await balance(wallet()), before.wallet + clientPart)
    // every later move is 409 naming the state
    for (const move of ['respond', 'resolve', 'withdraw']) {
      const who = move === 'withdraw' ? s.alice : operator
      const res = await s.call(
        who,
        'POST',
        `/api/disputes/${dispute.id}/${move}`,
        move === 'respond' ? { text: 'x' } : move === 'resolve' ? { outcome: 'client' } : {},
      )
      assert.deepEqual([res.status, codeOf(res)], [409, 'dispute_state'], move)
      assert.match(messageOf(res), /resolved/)
    }
    const { rows: events } = await sql<{ type: string }>`
      select type from rental_events where subjects->>'dispute_id' = ${dispute.id} and type like 'dispute.%' order by seq`.execute(
      s.db,
    )
    assert.deepEqual(
      events.map((e) => e.type),
      ['dispute.opened', 'dispute.responded', 'dispute.resolved'],
    )
  })

  it('twenty concurrent resolves of a dispute on a paid escrow settle once: one refund transfer, one receipt', async () => {
    const key = s.newClientKey()
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, key)
    await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'Each receipt is a leaf.',
    })
    await releaseAndInvoice(s, engagementId, key)
    const dispute = await open({
      engagement_id: engagementId,
      amount_fils: 3,
      reason: 'Paid for nothing useful.',
    })
    const before = await balance(wallet())
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        s.call(operator, 'POST', `/api/disputes/${dispute.id}/resolve`, { outcome: 'client' }),
      ),
    )
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, ...Array<number>(19).fill(409)],
      answers.map((a) => a.text).join('\n'),
    )
    assert.equal(await balance(wallet()), before + 3)
    const refunds = await s.db
      .selectFrom('refunds')
      .select(['transfer_id', 'state'])
      .where('engagement_id', '=', engagementId)
      .execute()
    assert.equal(refunds.length, 1)
    const receipts = await s.db
      .selectFrom('receipt_outbox')
      .select('id')
      .where('receipt_type', '=', 'dispute.resolved')
      .where('subject', '=', dispute.id)
      .execute()
    assert.equal(receipts.length, 1)
  })

  it('a dispute opens only on what is left to dispute: 409 naming the escrow’s state otherwise', async () => {
    const refused = async (body: Record<string, unknown>, why: RegExp) => {
      const res = await s.call(s.alice, 'POST', '/api/disputes', { reason: 'r', ...body })
      assert.deepEqual([res.status, codeOf(res)], [409, 'not_disputable'], res.text)
      assert.match(messageOf(res), why)
    }
    const refund = async (escrowId: string, amount: number, approve = true) => {
      const asked = await s.call(s.alice, 'POST', '/api/refunds', {
        escrow_id: escrowId,
        amount_fils: amount,
        reason: 'The summary missed a section.',
      })
      assert.equal(asked.status, 201, asked.text)
      const id = (asked.body as { id: string }).id
      if (!approve) return
      const accepted = await s.call(operator, 'POST', `/api/refunds/${id}/accept`, {})
      assert.equal(accepted.status, 200, accepted.text)
      const approved = await s.call(operator, 'POST', `/api/refunds/${id}/approve`, {})
      assert.equal(approved.status, 200, approved.text)
    }
    const paidTask = async () => {
      const held = await heldTask()
      const released = await release(held.engagementId, held.key)
      assert.equal(released.status, 200, released.text)
      return held
    }
    // refunded in full: nothing left (it answered 201, and resolving it 400 not_refundable)
    const full = await paidTask()
    await refund(full.escrowId, full.amount)
    await refused({ task_id: full.taskId, amount_fils: 1 }, /refunded in full: nothing is left to dispute/)
    await refused({ engagement_id: full.engagementId, amount_fils: 1 }, /refunded in full/)
    // a refund of all of it requested, not settled yet
    const asked = await paidTask()
    await refund(asked.escrowId, asked.amount, false)
    await refused({ task_id: asked.taskId, amount_fils: 1 }, /being refunded in full/)
    // partly refunded: what is left, and no more; resolving it for the client settles
    const part = await paidTask()
    await refund(part.escrowId, part.amount - 2)
    const tooMuch = await s.call(s.alice, 'POST', '/api/disputes', {
      task_id: part.taskId,
      amount_fils: 3,
      reason: 'r',
    })
    assert.deepEqual([tooMuch.status, codeOf(tooMuch)], [409, 'not_disputable'])
    assert.match(messageOf(tooMuch), /at most the 2 fils/)
    const dispute = await open({ task_id: part.taskId, amount_fils: 2, reason: 'The rest.' })
    const resolved = await s.call(operator, 'POST', `/api/disputes/${dispute.id}/resolve`, {
      outcome: 'client',
    })
    assert.equal(resolved.status, 200, resolved.text)
    // settled by a resolved dispute: its resolution is final
    const heldOnce = await heldTask()
    const first = await open({ task_id: heldOnce.taskId, amount_fils: 1, reason: 'One fil.' })
    const byProvider = await s.call(operator, 'POST', `/api/disputes/${first.id}/resolve`, {
      outcome: 'provider',
    })
    assert.equal(byProvider.status, 200, byProvider.text)
    await refused(
      { task_id: heldOnce.taskId, amount_fils: 1 },
      new RegExp(`dispute ${first.id} \\(resolved\\)`),
    )
    // already in a live dispute
    const live = await heldTask()
    await open({ task_id: live.taskId, amount_fils: 1, reason: 'First.' })
    const twice = await s.call(s.alice, 'POST', '/api/disputes', {
      task_id: live.taskId,
      amount_fils: 1,
      reason: 'Second.',
    })
    assert.deepEqual([twice.status, codeOf(twice)], [409, 'dispute_open'])
    // a second task's escrow is offered (not signed): nothing held; the engagement's end withdraws it
    const second = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: full.engagementId,
      text: 'Each receipt is a leaf.',
    })
    assert.equal(second.status, 200, second.text)
    const secondTask = (second.body.task as { id: string }).id
    await refused({ task_id: secondTask, amount_fils: 1 }, /is offered, not opened/)
    const ended = await s.call(s.alice, 'POST', `/api/engagements/${full.engagementId}/end`, {})
    assert.equal(ended.status, 200, ended.text)
    await refused({ task_id: secondTask, amount_fils: 1 }, /is withdrawn/)
    // an opened escrow no task used, returned to the wallet when the engagement ended
    const key = s.newClientKey()
    const unused = await s.hireAndSign(s.alice, 'job_summary', agentDid, key)
    const endUnused = await s.call(s.alice, 'POST', `/api/engagements/${unused}/end`, {})
    assert.equal(endUnused.status, 200, endUnused.text)
    await refused({ engagement_id: unused, amount_fils: 1 }, /returned to the wallet/)
    const count = await s.db
      .selectFrom('disputes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('task_id', 'in', [full.taskId, asked.taskId, secondTask])
      .executeTakeFirstOrThrow()
    assert.equal(Number(count.n), 0)
  })

  it('the client withdraws an open dispute: the escrow is unfrozen and released as usual', async () => {
    const held = await heldTask()
    const dispute = await open({ task_id: held.taskId, amount_fils: 1, reason: 'Wait.' })
    const byOperator = await s.call(operator, 'POST', `/api/disputes/${dispute.id}/withdraw`, {})
    assert.deepEqual([byOperator.status, codeOf(byOperator)], [403, 'forbidden'])
    const withdrawn = await s.call(s.alice, 'POST', `/api/disputes/${dispute.id}/withdraw`, {})
    assert.equal(withdrawn.status, 200, withdrawn.text)
    assert.equal((withdrawn.body as unknown as Dispute).state, 'withdrawn')
    const again = await s.call(s.alice, 'POST', `/api/disputes/${dispute.id}/withdraw`, {})
    assert.deepEqual([again.status, codeOf(again)], [409, 'dispute_state'])
    assert.match(messageOf(again), /withdrawn/)
    const resolve = await s.call(operator, 'POST', `/api/disputes/${dispute.id}/resolve`, {
      outcome: 'provider',
    })
    assert.deepEqual([resolve.status, codeOf(resolve)], [409, 'dispute_state'])
    const released = await release(held.engagementId, held.key)
    assert.equal(released.status, 200, released.text)
  })

  it('another organization sees nothing (404); bad input is 400, too much 409', async () => {
    const held = await heldTask()
    const dispute = await open({
      engagement_id: held.engagementId,
      amount_fils: held.amount,
      reason: 'All of it.',
    })
    for (const [method, path, body] of [
      ['GET', `/api/disputes/${dispute.id}`, undefined],
      ['POST', `/api/disputes/${dispute.id}/respond`, { text: 'mine' }],
      ['POST', `/api/disputes/${dispute.id}/withdraw`, {}],
      ['POST', `/api/disputes/${dispute.id}/resolve`, { outcome: 'client' }],
    ] as const) {
      const res = await s.call(stranger, method, path, body)
      assert.deepEqual([res.status, codeOf(res)], [404, 'dispute_not_found'], path)
    }
    const list = await s.call(stranger, 'GET', '/api/disputes')
    assert.deepEqual((list.body.disputes as unknown[]).length, 0)
    const mine = await s.call(s.alice, 'GET', '/api/disputes')
    assert.ok((mine.body.disputes as Dispute[]).some((d) => d.id === dispute.id))
    const theirs = await s.call(stranger, 'POST', '/api/disputes', {
      task_id: held.taskId,
      amount_fils: 1,
      reason: 'x',
    })
    assert.deepEqual([theirs.status, codeOf(theirs)], [404, 'task_not_found'])
    const strangersEngagement = await s.call(stranger, 'POST', '/api/disputes', {
      engagement_id: held.engagementId,
      amount_fils: 1,
      reason: 'x',
    })
    assert.deepEqual([strangersEngagement.status, codeOf(strangersEngagement)], [404, 'engagement_not_found'])
    const other = await heldTask()
    const tooMuch = await s.call(s.alice, 'POST', '/api/disputes', {
      task_id: other.taskId,
      amount_fils: other.amount + 1,
      reason: 'x',
    })
    assert.deepEqual([tooMuch.status, codeOf(tooMuch)], [409, 'not_disputable'])
    for (const body of [
      { task_id: other.taskId, amount_fils: 0, reason: 'r' },
      { task_id: other.taskId, amount_fils: 1.5, reason: 'r' },
      { task_id: other.taskId, amount_fils: '1', reason: 'r' },
      { task_id: other.taskId, amount_fils: 1, reason: '' },
      { task_id: other.taskId, amount_fils: 1, reason: 'x'.repeat(2001) },
      { task_id: other.taskId, amount_fils: 1 },
      { amount_fils: 1, reason: 'r' },
      { task_id: other.taskId, engagement_id: other.engagementId, amount_fils: 1, reason: 'r' },
      { task_id: other.taskId, amount_fils: 1, reason: 'r', extra: 1 },
      { task_id: other.taskId, amount_fils: 1, reason: 'r', evidence: { receipt_leaf_hashes: ['nope'] } },
      {
        task_id: other.taskId,
        amount_fils: 1,
        reason: 'r',
        evidence: { task_ids: Array.from({ length: 21 }, (_, i) => `t${i}`) },
      },
      {
        task_id: other.taskId,
        amount_fils: 1,
        reason: 'r',
        evidence: { task_ids: ['tsk_not_of_this_engagement'] },
      },
    ]) {
      const res = await s.call(s.alice, 'POST', '/api/disputes', body)
      assert.deepEqual([res.status, codeOf(res)], [400, 'invalid_request'], JSON.stringify(body))
    }
    for (const body of [
      { outcome: 'split', client_fils: 1, provider_fils: 1 },
      { outcome: 'split', client_fils: held.amount },
      { outcome: 'client', client_fils: 1 },
      { outcome: 'nobody' },
      {},
    ]) {
      const res = await s.call(operator, 'POST', `/api/disputes/${dispute.id}/resolve`, body)
      assert.deepEqual([res.status, codeOf(res)], [400, 'invalid_request'], JSON.stringify(body))
    }
    const unknown = await s.call(s.alice, 'GET', '/api/disputes/dsp_nope')
    assert.deepEqual([unknown.status, codeOf(unknown)], [404, 'dispute_not_found'])
    // the provider outcome unfreezes the held escrow: the client releases it as usual
    const resolved = await s.call(operator, 'POST', `/api/disputes/${dispute.id}/resolve`, {
      outcome: 'provider',
    })
    assert.equal(resolved.status, 200, resolved.text)
    assert.equal((await release(held.engagementId, held.key)).status, 200)
  })
})
