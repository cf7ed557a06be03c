import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { vatIncluded, vatShareOf } from '@svc/kit'
import type { Ed25519KeyPair } from '@svc/trust/ed25519'
import { JournalRail } from '../../src/areas/rail/journal.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { launchRental, rentalReady } from '../support/rental-process.ts'
import { releaseAndInvoice } from '../support/sweep-objects.ts'

interface Money {
  amount_fils: number
  currency: string
  display: string
}
interface Refund {
  id: string
  state: string
  escrow_id: string
  task_id: string | null
  requested: Money
  amount: Money
  transfer_id: string | null
  receipt_id: string | null
}

const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code

describe('rental refunds: requested, accepted (for less), approved once onto the client’s wallet', () => {
  let s: FullStack
  let operator: Client
  let stranger: Client
  let key: Ed25519KeyPair
  let taskId = ''
  let escrow: { id: string; hash: string; amount_fils: number; fee_fils: number }
  const rail = new JournalRail()
  const wallet = () => `wallet:${s.alice.me.organization.id}`

  const ask = (body: Record<string, unknown>) => s.call(s.alice, 'POST', '/api/refunds', body)
  const requested = async (amount: number) => {
    const res = await ask({
      escrow_id: escrow.id,
      amount_fils: amount,
      reason: 'The summary missed a section.',
    })
    assert.equal(res.status, 201, res.text)
    return res.body as unknown as Refund
  }

  before(async () => {
    // bob (the demo user as another client) is the one operator; a third client is no one's operator
    // restartable: the last test runs the rental in a process of its own and kills it
    s = await startFullStack({ RENTAL_OPERATORS: 'another-client' }, { restartable: true })
    operator = s.bob
    stranger = await s.signInWith('stranger@refunds.example')
    const agentDid = await s.agentOf('job_summary')
    key = s.newClientKey()
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, key)
    const task = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
    })
    taskId = (task.body.task as { id: string }).id
    await releaseAndInvoice(s, engagementId, key)
    const row = await s.db
      .selectFrom('escrows')
      .select(['id', 'hash', 'amount_fils', 'fee_fils', 'state'])
      .where('task_id', '=', taskId)
      .executeTakeFirstOrThrow()
    assert.equal(row.state, 'released')
    escrow = {
      id: row.id,
      hash: row.hash,
      amount_fils: Number(row.amount_fils),
      fee_fils: Number(row.fee_fils),
    }
    assert.ok(escrow.amount_fils >= 4 && escrow.fee_fils > 0, JSON.stringify(escrow))
  })
  const children: ChildProcess[] = []
  after(async () => {
    for (const child of children) child.kill('SIGKILL')
    await s?.close()
  })

  it('request → accept for less → approve: the wallet is credited once, in the proportions paid; statements show it', async () => {
    const start = new Date(Date.now() - 1000)
    const before = await rail.balance(s.db, wallet())
    const asked = escrow.amount_fils - 1
    const refund = await requested(asked)
    assert.equal(refund.state, 'requested')
    assert.equal(refund.task_id, taskId)
    // the client is neither the provider nor an operator: it cannot accept its own refund
    const own = await s.call(s.alice, 'POST', `/api/refunds/${refund.id}/accept`, {})
    assert.deepEqual([own.status, codeOf(own)], [403, 'forbidden'])
    const more = await s.call(operator, 'POST', `/api/refunds/${refund.id}/accept`, {
      amount_fils: asked + 1,
    })
    assert.deepEqual([more.status, codeOf(more)], [400, 'invalid_request'])
    const amount = asked - 1
    const accepted = await s.call(operator, 'POST', `/api/refunds/${refund.id}/accept`, {
      amount_fils: amount,
    })
    assert.equal(accepted.status, 200, accepted.text)
    assert.equal((accepted.body as unknown as Refund).amount.amount_fils, amount)
    // approval is an operator's: the client may not
    const byClient = await s.call(s.alice, 'POST', `/api/refunds/${refund.id}/approve`, {})
    assert.deepEqual([byClient.status, codeOf(byClient)], [403, 'forbidden'])
    const approved = await s.call(operator, 'POST', `/api/refunds/${refund.id}/approve`, {})
    assert.equal(approved.status, 200, approved.text)
    const settled = approved.body as unknown as Refund
    assert.equal(settled.state, 'settled')
    assert.ok(settled.transfer_id && settled.receipt_id)
    assert.equal(await rail.balance(s.db, wallet()), before + amount)
    // the postings: the fee's part ⌊amount × fee / paid⌋ from the fees, the VAT share (its credit
    // note's) from platform:vat, the rest from the payout
    const feePart = Math.floor((amount * escrow.fee_fils) / escrow.amount_fils)
    const vatPart = vatShareOf(amount, escrow.amount_fils, vatIncluded(escrow.amount_fils))
    const { rows } = await sql<{ account_id: string; amount: string }>`
      select account_id, amount from rail_postings where transfer_id = ${settled.transfer_id}
      order by account_id`.execute(s.db)
    const postings = Object.fromEntries(
      rows.map((r) => [
        r.account_id.startsWith('payout:')
          ? 'payout'
          : r.account_id.startsWith('wallet:')
            ? 'wallet'
            : r.account_id,
        Number(r.amount),
      ]),
    )
    assert.deepEqual(postings, {
      payout: -(amount - feePart - vatPart),
      'platform:fees': -feePart,
      'platform:vat': -vatPart,
      wallet: amount,
    })
    // a second approval is a move the state does not allow
    const again = await s.call(operator, 'POST', `/api/refunds/${refund.id}/approve`, {})
    assert.deepEqual([again.status, codeOf(again)], [409, 'refund_state'])
    assert.match((again.body.error as { message: string }).message, /settled/)
    const rejected = await s.call(s.alice, 'POST', `/api/refunds/${refund.id}/reject`, { reason: 'late' })
    assert.deepEqual([rejected.status, codeOf(rejected)], [409, 'refund_state'])
    // the statement shows the refund line with its journal transfer
    const to = encodeURIComponent(new Date(Date.now() + 1000).toISOString())
    const st = await s.call(
      s.alice,
      'GET',
      `/api/statements?from=${encodeURIComponent(start.toISOString())}&to=${to}`,
    )
    assert.equal(st.status, 200, st.text)
    const lines = (st.body.movements as Array<{ kind: string; transfer_id: string; wallet: Money }>).filter(
      (m) => m.kind === 'refund',
    )
    // one line per counter account (the payout's part, the fee's and the VAT's), all the one journal transfer
    assert.deepEqual(
      lines.map((m) => [m.transfer_id, m.wallet.amount_fils]),
      [
        [settled.transfer_id, amount - feePart - vatPart],
        [settled.transfer_id, feePart],
        [settled.transfer_id, vatPart],
      ].filter(([, n]) => n !== 0),
    )
    // the events and the receipt, once
    const { rows: events } = await sql<{ type: string }>`
      select type from rental_events where subjects->>'refund_id' = ${refund.id} order by seq`.execute(s.db)
    assert.deepEqual(
      events.map((e) => e.type),
      ['refund.requested', 'refund.accepted', 'credit_note.issued', 'refund.settled'],
    )
    const list = await s.call(s.alice, 'GET', '/api/refunds')
    assert.equal(list.status, 200, list.text)
    assert.ok((list.body.refunds as Refund[]).some((r) => r.id === refund.id && r.state === 'settled'))
  })

  it('twenty concurrent approvals settle once: one transfer, one receipt, one credit', async () => {
    const refund = await requested(1)
    const accepted = await s.call(operator, 'POST', `/api/refunds/${refund.id}/accept`, {})
    assert.equal(accepted.status, 200, accepted.text)
    const before = await rail.balance(s.db, wallet())
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => s.call(operator, 'POST', `/api/refunds/${refund.id}/approve`, {})),
    )
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, ...Array<number>(19).fill(409)],
      answers.map((a) => a.text).join('\n'),
    )
    assert.equal(await rail.balance(s.db, wallet()), before + 1)
    const { rows: transfers } = await sql<{ n: string }>`
      select count(*) as n from rail_transfers where idempotency_key = ${`refund:${refund.id}`}`.execute(s.db)
    assert.equal(Number(transfers[0]!.n), 1)
    const receipts = await s.db
      .selectFrom('receipt_outbox')
      .select('id')
      .where('receipt_type', '=', 'refund.settled')
      .where('subject', '=', refund.id)
      .execute()
    assert.equal(receipts.length, 1)
    const { rows: settledEvents } = await sql<{ n: string }>`
      select count(*) as n from rental_events where type = 'refund.settled' and subjects->>'refund_id' = ${refund.id}`.execute(
      s.db,
    )
    assert.equal(Number(settledEvents[0]!.n), 1)
    const notes = await s.db
      .selectFrom('credit_notes')
      .select('id')
      .where('refund_id', '=', refund.id)
      .execute()
    assert.equal(notes.length, 1)
  })

  it('refuses over-refunds (400), other organizations’ refunds (404), wrong states (409) and bad input (400)', async () => {
    // what is left: the escrow less the settled refunds above (and requested/accepted ones)
    const over = await ask({ escrow_id: escrow.id, amount_fils: escrow.amount_fils, reason: 'all of it' })
    assert.deepEqual([over.status, codeOf(over)], [400, 'not_refundable'])
    // the escrow named by its body's hash is the same escrow; another client's hash is not found
    const byHash = { escrow_hash: escrow.hash, amount_fils: escrow.amount_fils, reason: 'all of it' }
    const overByHash = await ask(byHash)
    assert.deepEqual([overByHash.status, codeOf(overByHash)], [400, 'not_refundable'])
    const refund = await requested(1)
    // the escrow is spent now: not one fil more
    const none = await ask({ task_id: taskId, amount_fils: 1, reason: 'one more' })
    assert.deepEqual([none.status, codeOf(none)], [400, 'not_refundable'])
    // another client, not an operator nor the provider: not found, whatever the move
    for (const move of ['accept', 'approve', 'reject']) {
      const res = await s.call(
        stranger,
        'POST',
        `/api/refunds/${refund.id}/${move}`,
        move === 'reject' ? { reason: 'mine' } : {},
      )
      assert.deepEqual([res.status, codeOf(res)], [404, 'refund_not_found'], move)
    }
    assert.equal(((await s.call(stranger, 'GET', '/api/refunds')).body.refunds as unknown[]).length, 0)
    const strangers = await s.call(stranger, 'POST', '/api/refunds', {
      task_id: taskId,
      amount_fils: 1,
      reason: 'x',
    })
    assert.deepEqual([strangers.status, codeOf(strangers)], [404, 'escrow_not_found'])
    const strangersByHash = await s.call(stranger, 'POST', '/api/refunds', { ...byHash, amount_fils: 1 })
    assert.deepEqual([strangersByHash.status, codeOf(strangersByHash)], [404, 'escrow_not_found'])
    // requested, not accepted: an approval is 409 naming the state
    const early = await s.call(operator, 'POST', `/api/refunds/${refund.id}/approve`, {})
    assert.deepEqual([early.status, codeOf(early)], [409, 'refund_state'])
    assert.match((early.body.error as { message: string }).message, /requested/)
    const rejected = await s.call(s.alice, 'POST', `/api/refunds/${refund.id}/reject`, {
      reason: 'never mind',
    })
    assert.equal(rejected.status, 200, rejected.text)
    assert.equal((rejected.body as unknown as Refund).state, 'rejected')
    const accept = await s.call(operator, 'POST', `/api/refunds/${refund.id}/accept`, {})
    assert.deepEqual([accept.status, codeOf(accept)], [409, 'refund_state'])
    // bad input
    for (const body of [
      { escrow_id: escrow.id, amount_fils: 0, reason: 'r' },
      { escrow_id: escrow.id, amount_fils: -5, reason: 'r' },
      { escrow_id: escrow.id, amount_fils: 1.5, reason: 'r' },
      { escrow_id: escrow.id, amount_fils: 2 ** 53, reason: 'r' },
      { escrow_id: escrow.id, amount_fils: '1', reason: 'r' },
      { escrow_id: escrow.id, amount_fils: 1 },
      { amount_fils: 1, reason: 'r' },
      { escrow_id: escrow.id, task_id: taskId, amount_fils: 1, reason: 'r' },
      { escrow_hash: escrow.hash, task_id: taskId, amount_fils: 1, reason: 'r' },
      { escrow_hash: 'sha256:not-hex', amount_fils: 1, reason: 'r' },
      { escrow_id: escrow.id, amount_fils: 1, reason: 'r', extra: true },
    ]) {
      const res = await ask(body)
      assert.deepEqual([res.status, codeOf(res)], [400, 'invalid_request'], JSON.stringify(body))
    }
    const unknown = await s.call(operator, 'POST', '/api/refunds/ref_nope/accept', {})
    assert.deepEqual([unknown.status, codeOf(unknown)], [404, 'refund_not_found'])
  })

  it('refunds approved across a kill -9 of the rental settle once: one transfer, one receipt, one credit note each', async (t) => {
    const key2 = s.newClientKey()
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', await s.agentOf('job_summary'), key2)
    const task = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
    })
    await releaseAndInvoice(s, engagementId, key2)
    const { id: escrowId } = await s.db
      .selectFrom('escrows')
      .select('id')
      .where('task_id', '=', (task.body.task as { id: string }).id)
      .executeTakeFirstOrThrow()
    // ten accepted refunds of one escrow: approved together, the kill finds some settled, some
    // in their transaction and some not begun
    const ids: string[] = []
    for (let i = 0; i < 10; i++) {
      const asked = await ask({ escrow_id: escrowId, amount_fils: 100, reason: `Killed mid-way ${i}.` })
      assert.equal(asked.status, 201, asked.text)
      const id = (asked.body as unknown as Refund).id
      assert.equal((await s.call(operator, 'POST', `/api/refunds/${id}/accept`, {})).status, 200)
      ids.push(id)
    }

    // the rental in a process of its own, on the same data and port (batches.test.ts does the same)
    await s.rental.close()
    const { child, exited } = await launchRental(s, children)
    await rentalReady(s)
    // every approval in flight; the process killed as the first one answers
    const answers = ids.map((id) =>
      s.call(operator, 'POST', `/api/refunds/${id}/approve`, {}).then(
        (a) => a.status,
        () => 0,
      ),
    )
    await Promise.race(answers)
    child.kill('SIGKILL')
    await exited
    t.diagnostic(`answers before the kill: ${JSON.stringify(await Promise.all(answers))}`)

    await s.restartRental()
    const found = await s.db.selectFrom('refunds').select('state').where('id', 'in', ids).execute()
    t.diagnostic(`after the restart: ${found.filter((r) => r.state === 'settled').length} of 10 settled`)
    for (const id of ids) {
      const again = await s.call(operator, 'POST', `/api/refunds/${id}/approve`, {})
      assert.ok(
        again.status === 200 || (again.status === 409 && codeOf(again) === 'refund_state'),
        again.text,
      )
      const row = await s.db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
      assert.equal(row.state, 'settled')
      const { rows: transfers } = await sql<{ n: string }>`
        select count(*) as n from rail_transfers where idempotency_key = ${`refund:${id}`}`.execute(s.db)
      assert.equal(Number(transfers[0]!.n), 1)
      const receipts = await s.db
        .selectFrom('receipt_outbox')
        .select('id')
        .where('receipt_type', '=', 'refund.settled')
        .where('subject', '=', id)
        .execute()
      assert.deepEqual(
        receipts.map((r) => r.id),
        [row.receipt_id],
      )
      const notes = await s.db.selectFrom('credit_notes').select('id').where('refund_id', '=', id).execute()
      assert.deepEqual(
        notes.map((n) => n.id),
        [row.credit_note_id],
      )
    }
    // the credit notes' numbers have no gap: the killed transactions gave theirs back
    const numbers = (await s.db.selectFrom('credit_notes').select('number').execute())
      .map((r) => Number(r.number.slice(-6)))
      .sort((a, b) => a - b)
    assert.deepEqual(
      numbers,
      numbers.map((_, i) => i + 1),
    )
  })
})
