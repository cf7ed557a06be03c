import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { JournalRail } from '../../src/areas/rail/journal.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'

const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code

/**
 * Issue 30, item 1: the client chose its coverage and premium, insured its own kill switch, and a
 * claim paid it from an unbounded external account (the statement still reconciled). The attack
 * as it was run, step by step; it minted 999,999,999 fils before the fix.
 */
describe('rental insurance: the mint through insurance (issue 30, item 1) is closed', () => {
  let s: FullStack
  let attacker: Client
  let engagementId = ''
  let agentDid = ''
  const rail = new JournalRail()
  const wallet = () => `wallet:${attacker.me.organization.id}`

  before(async () => {
    s = await startFullStack()
    attacker = await s.signInWith('attacker@mint.example')
    agentDid = await s.agentOf('job_summary')
    engagementId = await s.hireAndSign(attacker, 'job_summary', agentDid, s.newClientKey())
  })
  after(async () => s?.close())

  it('coverage 1,000,000,000 for a premium of 1, the kill switch, a claim: nothing is minted', async () => {
    const start = new Date(Date.now() - 1000)
    const before = await rail.balance(s.db, wallet())
    const bought = await s.call(attacker, 'POST', `/api/engagements/${engagementId}/insurance`, {
      coverage_fils: 1_000_000_000,
      premium_fils: 1,
      covers: ['failed_task'],
      ends_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    })

    // the rest of the attack: tasks held, the client's own kill switch fails them, a claim
    await s.call(attacker, 'POST', `/api/engagements/${engagementId}/config`, {
      approval: { mode: 'always' },
    })
    const tasks: string[] = []
    for (let i = 0; i < 2; i++) {
      const task = await s.call(attacker, 'POST', '/api/tasks', {
        engagement_id: engagementId,
        text: `Held for approval ${i}.`,
      })
      assert.equal(task.status, 200, task.text)
      tasks.push((task.body.task as { id: string }).id)
    }
    const revoked = await s.call(attacker, 'POST', `/api/agents/${agentDid}/revoke`, { reason: 'the mint' })
    assert.equal(revoked.status, 200, revoked.text)
    const claim = await s.call(attacker, 'POST', `/api/engagements/${engagementId}/insurance/claims`, {
      type: 'failed_task',
      amount_fils: 1_000_000_000,
      task_id: tasks[0],
    })
    assert.notEqual((claim.body.claim as { state?: string } | undefined)?.state, 'paid', claim.text)

    // the wallet did not grow, and no money came from anywhere but funding
    assert.ok((await rail.balance(s.db, wallet())) <= before, 'the wallet grew')
    // the client names neither its premium nor its coverage: the platform prices insurance
    assert.deepEqual([bought.status, codeOf(bought)], [400, 'quote_required'], bought.text)
    assert.match((bought.body.error as { message: string }).message, /premium_fils/)
    // nor can it quote itself more cover than it has at risk
    const quoted = await s.call(attacker, 'POST', `/api/engagements/${engagementId}/insurance/quote`, {
      coverage_fils: 1_000_000_000,
    })
    assert.deepEqual([quoted.status, codeOf(quoted)], [400, 'coverage_above_risk'], quoted.text)
    const { rows } = await sql<{ account_id: string; balance: string }>`
      select account_id, sum(amount) as balance from rail_postings
      where account_id like 'external:%' group by account_id`.execute(s.db)
    for (const row of rows)
      if (row.account_id !== 'external:funding')
        assert.ok(Number(row.balance) >= 0, `${row.account_id} went negative: ${row.balance}`)
    const to = encodeURIComponent(new Date(Date.now() + 1000).toISOString())
    const st = await s.call(
      attacker,
      'GET',
      `/api/statements?from=${encodeURIComponent(start.toISOString())}&to=${to}`,
    )
    assert.equal(st.status, 200, st.text)
    assert.equal(st.body.reconciles, true)
    assert.equal(
      (st.body.movements as Array<{ transfer_kind: string }>).filter(
        (m) => m.transfer_kind === 'insurance_claim',
      ).length,
      0,
    )
  })

  it('the rail refuses money out of an external account its rule does not name (409 transfer_not_allowed)', async () => {
    for (const [account, kind] of [
      ['external:insurance_reserve', 'insurance_claim'],
      ['external:funding', 'insurance_claim'],
      ['external:anything', 'wallet_grant'],
    ] as const)
      await assert.rejects(
        s.db.transaction().execute((trx) =>
          rail.transfer(trx, {
            idempotencyKey: `mint-${account}-${kind}`,
            kind,
            postings: [
              { account, amount: -1_000 },
              { account: wallet(), amount: 1_000 },
            ],
          }),
        ),
        (err: { status?: number; code?: string }) =>
          err.status === 409 && err.code === 'transfer_not_allowed',
        `${kind} from ${account}`,
      )
  })
})
