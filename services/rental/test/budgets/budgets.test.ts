import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { type Answer, type FullStack, startFullStack } from '../support/full-stack.ts'

interface Money {
  amount_fils: number
  currency: string
  display: string
}
interface BudgetAnswer {
  id: string
  scope: string
  engagement_id: string | null
  agent_did: string | null
  period: string
  period_start: string
  period_end: string
  limit: Money
  spent: Money
  left: Money
  thresholds: number[]
  thresholds_crossed: number[]
}
interface Logged {
  subjects: Record<string, string>
  data: Record<string, unknown>
}

describe('budgets: caps on spend, enforced where escrows are made', () => {
  let stack: FullStack
  let did: string
  let engagement: string
  let price: number

  const code = (res: Answer) => (res.body.error as { code?: string } | undefined)?.code
  const budget = async (body: Record<string, unknown>) => {
    const res = await stack.call(stack.alice, 'POST', '/api/budgets', body)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as BudgetAnswer
  }
  const read = async (id: string) => {
    const res = await stack.call(stack.alice, 'GET', `/api/budgets/${id}`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as BudgetAnswer
  }
  const postTask = (engagementId: string) =>
    stack.call(stack.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'Budgets cap spend. Each task commits its price to an escrow.',
      async: true,
    })
  const thresholdEvents = async (budgetId: string) => {
    const res = await stack.call(stack.alice, 'GET', '/api/audit?type=budget.threshold&limit=100')
    assert.equal(res.status, 200, res.text)
    return (res.body.events as Logged[]).filter((e) => e.subjects.budget_id === budgetId)
  }

  before(async () => {
    stack = await startFullStack()
    did = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
    const got = await stack.call(stack.alice, 'GET', `/api/engagements/${engagement}`)
    price = (got.body.engagement as { price_fils: number }).price_fils
    assert.ok(price > 0)
    // the first task takes the package's escrow (committed at hiring): later tasks each make one
    assert.equal((await postTask(engagement)).status, 200)
  })
  after(async () => stack.close())

  it('creates, lists, reads, updates and deletes a budget; money shown as money objects', async () => {
    const made = await budget({ name: 'the month', limit_fils: 1_000_000, thresholds: [80, 50] })
    assert.equal(made.scope, 'organization')
    assert.equal(made.period, 'month')
    assert.deepEqual(made.limit, { amount_fils: 1_000_000, currency: 'AED', display: 'AED\u00a010,000.00' })
    assert.equal(made.spent.amount_fils, 0)
    assert.equal(made.left.amount_fils, 1_000_000)
    assert.deepEqual(made.thresholds, [50, 80])
    const now = new Date()
    assert.equal(
      made.period_start,
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
    )
    const list = await stack.call(stack.alice, 'GET', '/api/budgets')
    assert.equal(list.status, 200, list.text)
    assert.ok((list.body.budgets as BudgetAnswer[]).some((b) => b.id === made.id))
    const arabic = await stack.call(stack.alice, 'GET', `/api/budgets/${made.id}?lang=ar`)
    assert.match((arabic.body as unknown as BudgetAnswer).limit.display, /د\.إ/)
    const updated = await stack.call(stack.alice, 'POST', `/api/budgets/${made.id}`, {
      limit_fils: 2_000_000,
    })
    assert.equal(updated.status, 200, updated.text)
    assert.equal((updated.body as unknown as BudgetAnswer).limit.amount_fils, 2_000_000)
    const deleted = await stack.call(stack.alice, 'DELETE', `/api/budgets/${made.id}`)
    assert.equal(deleted.status, 200, deleted.text)
    assert.equal((await stack.call(stack.alice, 'GET', `/api/budgets/${made.id}`)).status, 404)
    assert.equal((await stack.call(stack.alice, 'DELETE', `/api/budgets/${made.id}`)).status, 404)
    const custom = await budget({
      limit_fils: 100,
      period: { from: new Date(Date.now() - 3_600_000).toISOString(), to: '2999-01-01T00:00:00.000Z' },
    })
    assert.equal(custom.period, 'custom')
    assert.equal(custom.period_end, '2999-01-01T00:00:00.000Z')
    assert.equal((await stack.call(stack.alice, 'DELETE', `/api/budgets/${custom.id}`)).status, 200)
  })

  it('twenty concurrent tasks against room for five: exactly five pass, fifteen get 402 naming the budget', async () => {
    const capped = await budget({
      engagement_id: engagement,
      limit_fils: 5 * price,
      thresholds: [50, 80, 100],
    })
    assert.equal(capped.scope, 'engagement')
    const answers = await Promise.all(Array.from({ length: 20 }, () => postTask(engagement)))
    const passed = answers.filter((a) => a.status === 200)
    const refused = answers.filter((a) => a.status === 402)
    assert.equal(passed.length, 5, answers.map((a) => a.status).join(','))
    assert.equal(refused.length, 15)
    for (const r of refused) {
      assert.equal(code(r), 'budget_exceeded')
      assert.match((r.body.error as { message: string }).message, new RegExp(`${capped.id}.* 0 fils left`))
    }
    const after = await read(capped.id)
    assert.equal(after.spent.amount_fils, 5 * price)
    assert.equal(after.left.amount_fils, 0)
    assert.deepEqual(after.thresholds_crossed, [50, 80, 100])
    // each threshold announced once in the period, whatever came after
    assert.equal((await postTask(engagement)).status, 402)
    const events = await thresholdEvents(capped.id)
    assert.deepEqual(
      events.map((e) => e.data.threshold as number).sort((a, b) => a - b),
      [50, 80, 100],
    )
    // a higher limit lets tasks through again
    const raised = await stack.call(stack.alice, 'POST', `/api/budgets/${capped.id}`, {
      limit_fils: 6 * price,
    })
    assert.equal(raised.status, 200, raised.text)
    assert.equal((await postTask(engagement)).status, 200)
    assert.equal((await thresholdEvents(capped.id)).length, 3)
    assert.equal((await stack.call(stack.alice, 'DELETE', `/api/budgets/${capped.id}`)).status, 200)
  })

  it('an agent’s budget caps hiring it too', async () => {
    const capped = await budget({ agent_did: did, limit_fils: 2 * price })
    assert.equal(capped.scope, 'agent')
    // hiring commits the package's escrow; its first task takes it; the second makes a new one
    const second = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
    assert.equal((await postTask(second)).status, 200)
    assert.equal((await postTask(second)).status, 200)
    assert.equal((await read(capped.id)).spent.amount_fils, 2 * price)
    const refused = await postTask(second)
    assert.equal(refused.status, 402, refused.text)
    assert.equal(code(refused), 'budget_exceeded')
    // every engagement with the agent is capped, and so is hiring it again (nothing written)
    assert.equal((await postTask(engagement)).status, 402)
    const engagements = async () =>
      ((await stack.call(stack.alice, 'GET', '/api/engagements')).body.engagements as unknown[]).length
    const before = await engagements()
    const hire = await stack.call(stack.alice, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: did,
      client_did: didKeyFromEd25519(stack.newClientKey().publicKey),
    })
    assert.equal(hire.status, 402, hire.text)
    assert.equal(code(hire), 'budget_exceeded')
    assert.equal(await engagements(), before)
    assert.equal((await stack.call(stack.alice, 'DELETE', `/api/budgets/${capped.id}`)).status, 200)
    assert.equal((await postTask(engagement)).status, 200)
  })

  it('another organization’s budget is 404, and its engagements are not its to cap', async () => {
    const mine = await budget({ limit_fils: 1_000_000 })
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', { limit_fils: 5 }],
      ['DELETE', undefined],
    ] as const) {
      const res = await stack.call(stack.bob, method, `/api/budgets/${mine.id}`, body)
      assert.equal(res.status, 404, res.text)
      assert.equal(code(res), 'budget_not_found')
    }
    const list = await stack.call(stack.bob, 'GET', '/api/budgets')
    assert.equal((list.body.budgets as BudgetAnswer[]).length, 0)
    const theirs = await stack.call(stack.bob, 'POST', '/api/budgets', {
      limit_fils: 5,
      engagement_id: engagement,
    })
    assert.equal(theirs.status, 404, theirs.text)
    assert.equal((await read(mine.id)).limit.amount_fils, 1_000_000)
    assert.equal((await stack.call(stack.alice, 'DELETE', `/api/budgets/${mine.id}`)).status, 200)
  })

  it('bad input is 400: limits not positive integers or past 2^53-1, thresholds, strict bodies', async () => {
    const bad: Array<Record<string, unknown>> = [
      { limit_fils: 0 },
      { limit_fils: -5 },
      { limit_fils: 1.5 },
      { limit_fils: '100' },
      { limit_fils: 2 ** 53 },
      { limit_fils: 1e300 },
      {},
      { limit_fils: 5, thresholds: [0] },
      { limit_fils: 5, thresholds: [101] },
      { limit_fils: 5, thresholds: Array.from({ length: 11 }, (_, i) => i + 1) },
      { limit_fils: 5, extra: true },
      { limit_fils: 5, engagement_id: engagement, agent_did: did },
      { limit_fils: 5, agent_did: 'did:web:example.com' },
      { limit_fils: 5, period: { from: '2030-01-01T00:00:00Z', to: '2029-01-01T00:00:00Z' } },
      { limit_fils: 5, period: 'week' },
    ]
    for (const body of bad) {
      const res = await stack.call(stack.alice, 'POST', '/api/budgets', body)
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
    }
    const made = await budget({ limit_fils: Number.MAX_SAFE_INTEGER })
    assert.equal(made.limit.amount_fils, Number.MAX_SAFE_INTEGER)
    for (const body of [{}, { limit_fils: 0 }, { limit_fils: 2 ** 53 }, { scope: 'agent' }]) {
      const res = await stack.call(stack.alice, 'POST', `/api/budgets/${made.id}`, body)
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
    }
    assert.equal((await stack.call(stack.alice, 'GET', '/api/budgets/bgt_nothing')).status, 404)
    assert.equal((await stack.call(stack.alice, 'DELETE', `/api/budgets/${made.id}`)).status, 200)
  })
})
