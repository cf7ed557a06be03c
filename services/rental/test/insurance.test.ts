import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { JournalRail } from '../src/areas/rail/journal.ts'
import { type Client, type FullStack, startFullStack } from './full-stack.ts'

interface Money {
  amount_fils: number
}
interface Claim {
  id: string
  state: string
  paid: Money
  refuse_reason: string | null
}
interface Policy {
  id: string
  remaining: Money
  claims: Claim[]
  premium_transfer_id: string
}

const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code

describe('rental insurance: a policy with its premium on the rail, claims checked against the record and paid once', () => {
  let s: FullStack
  let insured: Client
  let engagementId = ''
  let agentDid = ''
  const failed: string[] = []
  const rail = new JournalRail()
  const wallet = () => `wallet:${insured.me.organization.id}`
  const ends = () => new Date(Date.now() + 30 * 86_400_000).toISOString()
  const claim = (body: Record<string, unknown>) =>
    s.call(insured, 'POST', `/api/engagements/${engagementId}/insurance/claims`, body)

  before(async () => {
    s = await startFullStack()
    // an organization of its own: it revokes the agent to fail its waiting tasks
    insured = await s.signInWith('insured@insurance.example')
    agentDid = await s.agentOf('job_summary')
    engagementId = await s.hireAndSign(insured, 'job_summary', agentDid, s.newClientKey())
  })
  after(async () => s?.close())

  it('the premium is charged once from the wallet (402 when it lacks it) and shows on the statement; one active policy', async () => {
    const from = new Date(Date.now() - 1000).toISOString()
    const poor = await s.call(insured, 'POST', `/api/engagements/${engagementId}/insurance`, {
      coverage_fils: Number.MAX_SAFE_INTEGER,
      premium_fils: Number.MAX_SAFE_INTEGER,
      covers: ['failed_task'],
      ends_at: ends(),
    })
    assert.deepEqual([poor.status, codeOf(poor)], [402, 'premium_unpaid'], poor.text)
    const before = await rail.balance(s.db, wallet())
    const started = await s.call(insured, 'POST', `/api/engagements/${engagementId}/insurance`, {
      coverage_fils: 500,
      premium_fils: 50,
      covers: ['failed_task', 'sla_breach'],
      ends_at: ends(),
    })
    assert.equal(started.status, 201, started.text)
    const policy = started.body as unknown as Policy
    assert.equal(policy.remaining.amount_fils, 500)
    assert.equal(await rail.balance(s.db, wallet()), before - 50)
    const again = await s.call(insured, 'POST', `/api/engagements/${engagementId}/insurance`, {
      coverage_fils: 500,
      premium_fils: 50,
      covers: ['incident'],
      ends_at: ends(),
    })
    assert.deepEqual([again.status, codeOf(again)], [409, 'policy_active'])
    assert.match((again.body.error as { message: string }).message, new RegExp(policy.id))
    const to = encodeURIComponent(new Date(Date.now() + 1000).toISOString())
    const st = await s.call(insured, 'GET', `/api/statements?from=${encodeURIComponent(from)}&to=${to}`)
    assert.equal(st.status, 200, st.text)
    const lines = (
      st.body.movements as Array<{ transfer_id: string; transfer_kind: string; wallet: Money }>
    ).filter((m) => m.transfer_kind === 'insurance_premium')
    assert.deepEqual(
      lines.map((m) => [m.transfer_id, m.wallet.amount_fils]),
      [[policy.premium_transfer_id, -50]],
    )
    // another organization: the engagement is not found
    const other = await s.call(s.alice, 'GET', `/api/engagements/${engagementId}/insurance`)
    assert.deepEqual([other.status, codeOf(other)], [404, 'engagement_not_found'])
  })

  it('claims: a failed task is paid once, up to the coverage; without evidence or not covered, refused with the reason', async () => {
    // three tasks held for approval, then the agent revoked: all three fail
    await s.call(insured, 'POST', `/api/engagements/${engagementId}/config`, { approval: { mode: 'always' } })
    for (let i = 0; i < 3; i++) {
      const task = await s.call(insured, 'POST', '/api/tasks', {
        engagement_id: engagementId,
        text: `Held for approval ${i}.`,
      })
      assert.equal(task.status, 200, task.text)
      failed.push((task.body.task as { id: string }).id)
    }
    const revoked = await s.call(insured, 'POST', `/api/agents/${agentDid}/revoke`, {
      reason: 'insurance test',
    })
    assert.equal(revoked.status, 200, revoked.text)
    const before = await rail.balance(s.db, wallet())

    const none = await claim({ type: 'failed_task', amount_fils: 100 })
    assert.equal(none.status, 201, none.text)
    assert.equal((none.body.claim as Claim).state, 'refused')
    assert.match((none.body.claim as Claim).refuse_reason!, /no evidence/)
    const breach = await claim({ type: 'sla_breach', amount_fils: 100, event_id: 'evt_1' })
    assert.match((breach.body.claim as Claim).refuse_reason!, /no sla\.breached event/)
    const incident = await claim({ type: 'incident', amount_fils: 100, incident_id: 'inc_1' })
    assert.match((incident.body.claim as Claim).refuse_reason!, /does not cover incident/)

    const first = await claim({ type: 'failed_task', amount_fils: 400, task_id: failed[0] })
    assert.equal((first.body.claim as Claim).state, 'paid', first.text)
    assert.equal((first.body.claim as Claim).paid.amount_fils, 400)
    // the same failed task again, even at once from many: never paid twice
    const repeats = await Promise.all(
      Array.from({ length: 5 }, () => claim({ type: 'failed_task', amount_fils: 10, task_id: failed[0] })),
    )
    for (const r of repeats) {
      assert.equal((r.body.claim as Claim).state, 'refused', r.text)
      assert.match((r.body.claim as Claim).refuse_reason!, /paid already/)
    }
    // the coverage caps the next one: 100 left of 500
    const capped = await claim({ type: 'failed_task', amount_fils: 400, task_id: failed[1] })
    assert.equal((capped.body.claim as Claim).paid.amount_fils, 100)
    const spent = await claim({ type: 'failed_task', amount_fils: 1, task_id: failed[2] })
    assert.match((spent.body.claim as Claim).refuse_reason!, /coverage is spent/)
    assert.equal(await rail.balance(s.db, wallet()), before + 500)

    const got = await s.call(insured, 'GET', `/api/engagements/${engagementId}/insurance`)
    assert.equal(got.status, 200, got.text)
    const policy = got.body as unknown as Policy
    assert.equal(policy.remaining.amount_fils, 0)
    assert.deepEqual(
      policy.claims.filter((c) => c.state === 'paid').map((c) => c.paid.amount_fils),
      [400, 100],
    )
    assert.equal(policy.claims.length, 11)
  })

  it('an incident reported about the engagement is paid once; one about another engagement is refused', async () => {
    const covered = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const other = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const started = await s.call(s.alice, 'POST', `/api/engagements/${covered}/insurance`, {
      coverage_fils: 300,
      premium_fils: 3,
      covers: ['incident'],
      ends_at: ends(),
    })
    assert.equal(started.status, 201, started.text)
    const report = async (engagement: string) => {
      const res = await s.call(s.alice, 'POST', '/api/incidents', {
        engagement_id: engagement,
        severity: 'sev3',
        summary: 'The agent answered nothing for an hour.',
        impact: 'Tasks waited.',
      })
      assert.equal(res.status, 201, res.text)
      return (res.body as { id: string }).id
    }
    const ours = await report(covered)
    const theirs = await report(other)
    const claimOn = (incident_id: string) =>
      s.call(s.alice, 'POST', `/api/engagements/${covered}/insurance/claims`, {
        type: 'incident',
        amount_fils: 120,
        incident_id,
      })
    const paid = await claimOn(ours)
    assert.equal(paid.status, 201, paid.text)
    assert.deepEqual(
      [(paid.body.claim as Claim).state, (paid.body.claim as Claim).paid.amount_fils],
      ['paid', 120],
    )
    const again = await claimOn(ours)
    assert.match((again.body.claim as Claim).refuse_reason!, /paid already/)
    const elsewhere = await claimOn(theirs)
    assert.match((elsewhere.body.claim as Claim).refuse_reason!, /not about this engagement/)
    const unknown = await claimOn('inc_unknown')
    assert.match((unknown.body.claim as Claim).refuse_reason!, /no incident\.reported event/)
  })

  it('bad input is 400; a claim on an engagement without a policy is 404', async () => {
    for (const body of [
      { coverage_fils: 0, premium_fils: 1, covers: ['incident'], ends_at: ends() },
      { coverage_fils: 10, premium_fils: 11, covers: ['incident'], ends_at: ends() },
      { coverage_fils: 10, premium_fils: 1, covers: [], ends_at: ends() },
      { coverage_fils: 10, premium_fils: 1, covers: ['fire'], ends_at: ends() },
      { coverage_fils: 10, premium_fils: 1, covers: ['incident', 'incident'], ends_at: ends() },
      { coverage_fils: 10, premium_fils: 1, covers: ['incident'], ends_at: 'tomorrow' },
      { coverage_fils: 10, premium_fils: 1, covers: ['incident'], ends_at: '2000-01-01T00:00:00Z' },
      { coverage_fils: 10, premium_fils: 1, covers: ['incident'] },
      { coverage_fils: 10, premium_fils: 1, covers: ['incident'], ends_at: ends(), extra: 1 },
    ]) {
      const res = await s.call(insured, 'POST', `/api/engagements/${engagementId}/insurance`, body)
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
