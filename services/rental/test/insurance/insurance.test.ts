import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import type { Ed25519KeyPair } from '@svc/trust/ed25519'
import { agents } from '../../../agents/src/app.ts'
import { JournalRail } from '../../src/areas/rail/journal.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import {
  endedTask,
  fundReserve,
  insuranceFunds,
  newTask,
  releaseCompleted,
} from '../support/money-actions.ts'

interface Money {
  amount_fils: number
  display: string
}
interface Claim {
  id: string
  state: string
  loss: Money | null
  paid: Money
  refuse_reason: string | null
  transfer_id: string | null
}
interface Policy {
  id: string
  coverage: Money
  premium: Money
  remaining: Money
  claims: Claim[]
  premium_transfer_id: string
  quote_id: string
}
interface Quote {
  id: string
  coverage: Money
  premium: Money
  covers: string[]
  period_days: number
  summary: string
  basis: {
    money_at_risk: Money
    failure_rate_bps: number
    breach_rate_bps: number
    credit_bps_per_breach: number
    loading_pct: number
  }
}

const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code
const messageOf = (a: { body: Record<string, unknown> }) =>
  (a.body.error as { message?: string }).message ?? ''

describe('rental insurance: priced by the platform, backed by its funds, claims paid the loss proven once', () => {
  let s: FullStack
  let insured: Client
  let operator: Client
  let key: Ed25519KeyPair
  let engagementId = ''
  let agentDid = ''
  let policy: Policy
  let revived: RunningService<unknown> | undefined
  const rail = new JournalRail()
  const wallet = () => `wallet:${insured.me.organization.id}`
  const claim = (body: Record<string, unknown>) =>
    s.call(insured, 'POST', `/api/engagements/${engagementId}/insurance/claims`, body)
  const quote = (body: Record<string, unknown>, engagement = engagementId) =>
    s.call(insured, 'POST', `/api/engagements/${engagement}/insurance/quote`, body)
  const buy = (body: Record<string, unknown>, engagement = engagementId) =>
    s.call(insured, 'POST', `/api/engagements/${engagement}/insurance`, body)

  before(async () => {
    // bob is the operator; half of each release is the platform's fee (so a few releases fund the
    // reserve); an agent that cannot be reached fails its task after one attempt
    s = await startFullStack({
      RENTAL_OPERATORS: 'another-client',
      RENTAL_FEE_BPS: '5000',
      RENTAL_TASK_RETRIES: '0',
    })
    operator = s.bob
    insured = await s.signInWith('insured@insurance.example')
    agentDid = await s.agentOf('job_summary')
    key = s.newClientKey()
    engagementId = await s.hireAndSign(insured, 'job_summary', agentDid, key)
    // alice's two released tasks: the platform's fees
    const aliceKey = s.newClientKey()
    const paying = await s.hireAndSign(s.alice, 'job_summary', agentDid, aliceKey)
    for (const text of ['The ledger records every receipt.', 'Each receipt is a leaf in a Merkle tree.'])
      await endedTask(s, s.alice, (await newTask(s, s.alice, paying, aliceKey, text)).id)
    assert.equal(await releaseCompleted(s, s.alice, paying, aliceKey), 2)
  })
  after(async () => {
    await revived?.close()
    await s?.close()
  })

  it('declines cover its funds cannot back, in words; only an operator funds the reserve, from fees', async () => {
    const declined = await quote({})
    assert.deepEqual([declined.status, codeOf(declined)], [409, 'coverage_declined'], declined.text)
    assert.match(messageOf(declined), /insurance funds hold AED\s0\.00 .* declines this cover/)
    for (const [method, path, body] of [
      ['POST', '/api/insurance/reserve', { amount_fils: 1 }],
      ['GET', '/api/insurance/funds', undefined],
    ] as const) {
      const res = await s.call(insured, method, path, body)
      assert.deepEqual([res.status, codeOf(res)], [403, 'forbidden'], res.text)
    }
    const funds = await insuranceFunds(s, operator)
    assert.equal(funds.fees, 2500)
    const tooMuch = await fundReserve(s, operator, funds.fees + 1)
    assert.deepEqual([tooMuch.status, codeOf(tooMuch)], [409, 'insufficient_funds'], tooMuch.text)
    const funded = await fundReserve(s, operator, funds.fees)
    assert.equal(funded.status, 201, funded.text)
    assert.deepEqual(await insuranceFunds(s, operator), {
      pool: 0,
      reserve: 2500,
      exposure: 0,
      available: 2500,
      fees: 0,
    })
  })

  it('a quote is the platform’s: coverage up to the money at risk, the premium from the agent’s record; bought as it is', async () => {
    const above = await quote({ coverage_fils: 2501 })
    assert.deepEqual([above.status, codeOf(above)], [400, 'coverage_above_risk'], above.text)
    assert.match(messageOf(above), /2500 fils/)
    const offered = await quote({})
    assert.equal(offered.status, 201, offered.text)
    const q = offered.body as unknown as Quote
    // the engagement's opened escrow (the package's) is the money at risk, and the whole coverage
    assert.equal(q.basis.money_at_risk.amount_fils, 2500)
    assert.equal(q.coverage.amount_fils, 2500)
    assert.deepEqual(q.covers, ['failed_task', 'sla_breach'])
    // expected loss × 125 %, rounded up: a failed task's price at the failure rate, a breach's credit per 30 days
    const { failure_rate_bps: f, breach_rate_bps: b, credit_bps_per_breach: c } = q.basis
    const expected = Math.max(
      100,
      Math.ceil((2500 * (f / 1e4 + (b / 1e4) * (q.period_days / 30) * (c / 1e4)) * 125) / 100),
    )
    assert.equal(q.premium.amount_fils, expected, JSON.stringify(q.basis))
    assert.ok(q.premium.amount_fils < q.coverage.amount_fils)
    assert.match(q.summary, /up to AED\s25\.00 in all, for 30 days/)

    // the old body and a premium of the client's are refused, naming the field
    const old = await buy({
      coverage_fils: 500,
      premium_fils: 50,
      covers: ['failed_task'],
      ends_at: new Date(Date.now() + 86_400_000).toISOString(),
    })
    assert.deepEqual([old.status, codeOf(old)], [400, 'quote_required'], old.text)
    assert.match(messageOf(old), /premium_fils: the premium is the platform's/)
    const cheaper = await buy({ quote_id: q.id, premium_fils: 1 })
    assert.deepEqual([cheaper.status, codeOf(cheaper)], [400, 'quote_required'])
    const more = await buy({ quote_id: q.id, coverage_fils: 10_000 })
    assert.deepEqual([more.status, codeOf(more)], [400, 'quote_required'])
    assert.match(messageOf(more), /coverage_fils/)
    const none = await buy({})
    assert.deepEqual([none.status, codeOf(none)], [400, 'quote_required'])
    const unknown = await buy({ quote_id: 'quo_unknown' })
    assert.deepEqual([unknown.status, codeOf(unknown)], [404, 'quote_not_found'])

    const start = new Date(Date.now() - 1000)
    const walletBefore = await rail.balance(s.db, wallet())
    const bought = await buy({ quote_id: q.id })
    assert.equal(bought.status, 201, bought.text)
    policy = bought.body as unknown as Policy
    assert.deepEqual(
      [policy.coverage.amount_fils, policy.premium.amount_fils, policy.quote_id],
      [2500, q.premium.amount_fils, q.id],
    )
    assert.equal(await rail.balance(s.db, wallet()), walletBefore - q.premium.amount_fils)
    assert.equal(await rail.balance(s.db, 'platform:insurance'), q.premium.amount_fils)
    const again = await buy({ quote_id: q.id })
    assert.deepEqual([again.status, codeOf(again)], [409, 'policy_active'])
    const to = encodeURIComponent(new Date(Date.now() + 1000).toISOString())
    const st = await s.call(
      insured,
      'GET',
      `/api/statements?from=${encodeURIComponent(start.toISOString())}&to=${to}`,
    )
    assert.equal(st.body.reconciles, true)
    const lines = (
      st.body.movements as Array<{ transfer_id: string; transfer_kind: string; wallet: Money }>
    ).filter((m) => m.transfer_kind === 'insurance_premium')
    assert.deepEqual(
      lines.map((m) => [m.transfer_id, m.wallet.amount_fils]),
      [[policy.premium_transfer_id, -q.premium.amount_fils]],
    )

    const other = await s.hireAndSign(insured, 'job_summary', agentDid, s.newClientKey())
    // what the funds back is sold: another engagement's cover is declined, said in words, or
    // (unasked) offered only as far as the funds still back it: the premium just paid
    const backed = await quote({}, other)
    assert.equal(backed.status, 201, backed.text)
    assert.equal((backed.body as unknown as Quote).coverage.amount_fils, q.premium.amount_fils)
    const unbacked = await quote({ coverage_fils: 2500 }, other)
    assert.deepEqual([unbacked.status, codeOf(unbacked)], [409, 'coverage_declined'], unbacked.text)
    assert.match(messageOf(unbacked), /cover it has sold still needs AED\s25\.00/)
    // a cover no larger than the premium's minimum is not sold
    const small = await quote({ coverage_fils: 1 }, other)
    assert.deepEqual([small.status, codeOf(small)], [409, 'coverage_declined'], small.text)
    assert.match(messageOf(small), /worth no more than its premium/)
    // another organization's engagement is not found
    const stranger = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/insurance/quote`, {})
    assert.deepEqual([stranger.status, codeOf(stranger)], [404, 'engagement_not_found'])
  })

  it('claims: a task its agent failed is paid its price at most, once, up to the coverage; what the client caused is not', async () => {
    // the agent cannot be reached: two tasks (their escrows opened) fail by the agent's doing
    const url = s.agents.url
    await s.agents.close()
    const failed: string[] = []
    for (const text of ['The agent is gone.', 'Still gone.']) {
      const task = await newTask(s, insured, engagementId, key, text)
      const ended = await endedTask(s, insured, task.id)
      assert.equal(ended.state, 'failed', JSON.stringify(ended))
      assert.match(ended.error ?? '', /gave up/)
      failed.push(task.id)
    }
    revived = await startService(
      agents,
      testEnv({
        AGENTS_KEY_SEED: Buffer.alloc(32, 7).toString('base64url'),
        AGENTS_PORT: new URL(url).port,
        AGENTS_URL: url,
        IDP_URL: s.idp.url,
        AGENTS_TOOL_WAIT_MS: '0',
      }),
    )
    // tasks the client ended itself: canceled, rejected, stopped by its kill switch
    await s.call(insured, 'POST', `/api/engagements/${engagementId}/config`, { approval: { mode: 'always' } })
    const held: string[] = []
    for (let i = 0; i < 3; i++)
      held.push((await newTask(s, insured, engagementId, key, `Held ${i}.`, false)).id)
    const canceled = await s.call(insured, 'POST', `/api/tasks/${held[0]}/cancel`, {})
    assert.equal(canceled.status, 200, canceled.text)
    const approvals = (await s.call(insured, 'GET', '/api/approvals?state=pending')).body.approvals as Array<{
      id: string
      task_id: string
    }>
    const approval = approvals.find((a) => a.task_id === held[1])!
    const rejected = await s.call(insured, 'POST', `/api/approvals/${approval.id}/reject`, {})
    assert.equal(rejected.status, 200, rejected.text)
    const revoked = await s.call(insured, 'POST', `/api/agents/${agentDid}/revoke`, {
      reason: 'insurance test',
    })
    assert.equal(revoked.status, 200, revoked.text)

    const before = await rail.balance(s.db, wallet())
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ type: 'failed_task', task_id: held[0] }, /is canceled, not failed/],
      [{ type: 'failed_task', task_id: held[1] }, /is rejected, not failed/],
      [{ type: 'failed_task', task_id: held[2] }, /by your own doing \(agent revoked\)/],
      [{ type: 'failed_task' }, /no evidence/],
      [{ type: 'failed_task', task_id: 'tsk_unknown' }, /no task tsk_unknown of this engagement/],
      [{ type: 'sla_breach', event_id: 'evt_1' }, /no sla\.breached event evt_1/],
      [{ type: 'incident', incident_id: 'inc_1' }, /does not cover incident/],
    ]
    for (const [body, reason] of refusals) {
      const res = await claim({ amount_fils: 1_000_000, ...body })
      assert.equal(res.status, 201, res.text)
      assert.equal((res.body.claim as Claim).state, 'refused', res.text)
      assert.match((res.body.claim as Claim).refuse_reason!, reason)
    }
    // the loss is the failed task's price (its opened escrow); the amount asked caps it
    const first = await claim({ type: 'failed_task', task_id: failed[0], amount_fils: 1000 })
    const paid = first.body.claim as Claim
    assert.deepEqual(
      [paid.state, paid.loss?.amount_fils, paid.paid.amount_fils],
      ['paid', 2500, 1000],
      first.text,
    )
    // once per event, even asked at once from many
    const repeats = await Promise.all(
      Array.from({ length: 4 }, () => claim({ type: 'failed_task', task_id: failed[0] })),
    )
    for (const r of repeats) assert.match((r.body.claim as Claim).refuse_reason!, /paid already/, r.text)
    // the coverage caps the next: 1500 left of 2500, from the pool (the premium) and then the reserve
    const second = await claim({ type: 'failed_task', task_id: failed[1], amount_fils: 1_000_000 })
    assert.equal((second.body.claim as Claim).paid.amount_fils, 1500, second.text)
    assert.equal(await rail.balance(s.db, 'platform:insurance'), 0)
    assert.equal(await rail.balance(s.db, 'platform:insurance_reserve'), policy.premium.amount_fils)
    assert.equal(await rail.balance(s.db, wallet()), before + 2500)
    const got = (await s.call(insured, 'GET', `/api/engagements/${engagementId}/insurance`))
      .body as unknown as Policy
    assert.equal(got.remaining.amount_fils, 0)
    assert.deepEqual(
      got.claims.filter((c) => c.state === 'paid').map((c) => c.paid.amount_fils),
      [1000, 1500],
    )
  })

  it('bad input is 400; a claim on an engagement without a policy is 404', async () => {
    for (const body of [
      { covers: [] },
      { covers: ['incident'] },
      { covers: ['failed_task', 'failed_task'] },
      { coverage_fils: 0 },
      { days: 0 },
      { days: 367 },
      { extra: 1 },
    ]) {
      const res = await quote(body)
      assert.deepEqual([res.status, codeOf(res)], [400, 'invalid_request'], JSON.stringify(body))
    }
    for (const body of [
      { type: 'failed_task', amount_fils: 0 },
      { type: 'flood', amount_fils: 1 },
      { type: 'failed_task', amount_fils: 1, task_id: '' },
      { type: 'failed_task', amount_fils: 1, extra: true },
    ]) {
      const res = await claim(body)
      assert.deepEqual([res.status, codeOf(res)], [400, 'invalid_request'], JSON.stringify(body))
    }
    const bare = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const noPolicy = await s.call(s.alice, 'POST', `/api/engagements/${bare}/insurance/claims`, {
      type: 'failed_task',
      amount_fils: 1,
    })
    assert.deepEqual([noPolicy.status, codeOf(noPolicy)], [404, 'policy_not_found'])
    const get = await s.call(s.alice, 'GET', `/api/engagements/${bare}/insurance`)
    assert.deepEqual([get.status, codeOf(get)], [404, 'policy_not_found'])
  })
})
