import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { Receiver, until } from './sla-helpers.ts'
import { eventually } from '../support/stack.ts'

interface Measurement {
  term: string
  target: number
  measured: number | null
  status: string
  window: { tasks?: number; days?: number; observed: number }
  evidence: { task_ids: string[]; receipt_leaf_hashes: string[] }
  breached_since: string | null
}
interface SlaEvent {
  id: string
  event_id: string
  type: string
  engagement_id: string
  term: string
  measured: number | null
  target: number
  evidence: { task_ids: string[]; receipt_leaf_hashes: string[] }
}
interface Receipt {
  task_id: string | null
  leaf_hash: string
  envelope: { receipt: { type: string; data?: Record<string, string> } }
}

/** p95 by nearest rank, as docs/rental/sla.md defines it. */
const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(0.95 * values.length) - 1]!

describe('SLA: terms measured from receipts, breaches and restorations as events and webhooks', () => {
  let stack: FullStack
  const receiver = new Receiver()
  let engagement = ''
  let agent = ''
  // the rental's clock: while `slow`, every reading is 31 s after the last (a task lasts over 30 s)
  let offset = 0
  let slow = false
  const now = () => {
    if (slow) offset += 31_000
    return new Date(Date.now() + offset)
  }

  const runTask = async (text: string) => {
    const res = await stack.call(stack.alice, 'POST', '/api/tasks', { engagement_id: engagement, text })
    assert.equal(res.status, 200, res.text)
    const task = res.body.task as { id: string; state: string }
    assert.equal(task.state, 'completed', res.text)
    return task.id
  }
  const sla = async () => {
    const res = await stack.call(stack.alice, 'GET', `/api/engagements/${engagement}/sla`)
    assert.equal(res.status, 200, res.text)
    return res.body as { measurements: Measurement[]; sla: Record<string, unknown>; defaulted: boolean }
  }
  const term = (m: Measurement[], name: string) => m.find((x) => x.term === name)!
  const events = async (query = '') => {
    const res = await stack.call(stack.alice, 'GET', `/api/sla/events?engagement_id=${engagement}${query}`)
    assert.equal(res.status, 200, res.text)
    return res.body.events as SlaEvent[]
  }

  before(async () => {
    await receiver.start()
    stack = await startFullStack({}, { now })
    agent = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', agent, stack.newClientKey())
    const hook = await stack.call(stack.alice, 'POST', '/api/webhooks', {
      url: receiver.url,
      event_types: ['sla.breached', 'sla.restored'],
    })
    assert.equal(hook.status, 201, hook.text)
    receiver.secret = hook.body.secret as string
  })
  after(async () => {
    await stack?.close()
    await receiver.close()
  })

  it('shows the signed SLA with its terms, nothing measured yet', async () => {
    const view = await sla()
    const body = (view.sla as { body: { service_levels: Record<string, number> } }).body
    assert.equal(body.service_levels.latency_p95_ms, 30_000)
    assert.equal(view.defaulted, false)
    assert.match(view.sla.hash as string, /^sha256:[0-9a-f]{64}$/)
    assert.equal((view.sla.signatures as unknown[]).length, 1)
    assert.equal(term(view.measurements, 'latency_p95').status, 'no_data')
    assert.equal(term(view.measurements, 'incident_response').status, 'no_data')
  })

  it('a slowed task breaches the latency term once: listed, with evidence, and delivered by webhook', async () => {
    slow = true
    let slowTask: string
    try {
      slowTask = await runTask('A slow summary of a long report about latency.')
    } finally {
      slow = false
    }
    await runTask('A second, quick summary: still breached (p95 of two is the slower).')
    const breached = await until('the breach is recorded', async () => {
      const list = await events('&type=sla.breached')
      return list.length > 0 ? list : undefined
    })
    assert.equal(breached.length, 1, 'recorded once until restored')
    const event = breached[0]!
    assert.equal(event.term, 'latency_p95')
    assert.equal(event.target, 30_000)
    assert.ok(event.measured! > 30_000)
    assert.deepEqual(event.evidence.task_ids, [slowTask])
    assert.equal(event.evidence.receipt_leaf_hashes.length, 1)
    const hooked = await until('the webhook took the breach', async () =>
      receiver.received.find((r) => r.type === 'sla.breached'),
    )
    assert.equal(hooked.data.details.engagement_id, engagement)
    assert.equal(hooked.data.details.term, 'latency_p95')
    assert.deepEqual(hooked.data.details.evidence, event.evidence)
    const view = await sla()
    const latency = term(view.measurements, 'latency_p95')
    assert.equal(latency.status, 'breached')
    assert.ok(latency.breached_since)
    assert.equal(term(view.measurements, 'success_rate').status, 'met')
  })

  it('measurements match a recomputation from the receipts', async () => {
    const res = await stack.call(stack.alice, 'GET', `/api/agents/${agent}/receipts`)
    assert.equal(res.status, 200, res.text)
    const mine = (res.body.receipts as Receipt[]).filter(
      (r) =>
        r.envelope.receipt.type === 'task.completed' && r.envelope.receipt.data?.engagement_id === engagement,
    )
    const spans = mine.map((r) => {
      const data = r.envelope.receipt.data!
      return Date.parse(data.completed_at!) - Date.parse(data.started_at!)
    })
    const latency = term((await sla()).measurements, 'latency_p95')
    assert.equal(latency.window.observed, mine.length)
    assert.equal(latency.measured, p95(spans))
    // the evidence names receipts the agent's record holds, by the same leaf hash
    const slowOne = mine.find((r) => r.task_id === latency.evidence.task_ids[0])!
    assert.deepEqual(latency.evidence.receipt_leaf_hashes, [slowOne.leaf_hash])
    assert.equal(term((await sla()).measurements, 'success_rate').measured, 10_000)
  })

  it('fast tasks filling the window restore the term, once', async () => {
    // p95 of n ≤ 20 spans by nearest rank is the slowest unless n = 20: 18 more quick tasks
    for (let round = 0; round < 3; round++)
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          runTask(`Quick summary number ${round * 6 + i + 3} of a short note.`),
        ),
      )
    const restored = await until('the term is restored', async () => {
      const list = await events('&type=sla.restored')
      return list.length > 0 ? list : undefined
    })
    assert.equal(restored.length, 1)
    assert.equal(restored[0]!.term, 'latency_p95')
    assert.ok(restored[0]!.measured! <= 30_000)
    const all = await events()
    assert.deepEqual(
      all.map((e) => e.type),
      ['sla.restored', 'sla.breached'],
    )
    await eventually('the webhook took the restoration', async () =>
      receiver.received.some((r) => r.type === 'sla.restored'),
    )
    assert.equal(term((await sla()).measurements, 'latency_p95').status, 'met')
    // the period filter: nothing before the engagement
    assert.equal((await events('&to=2000-01-01T00:00:00Z')).length, 0)
    assert.equal((await events(`&from=2000-01-01T00:00:00Z&limit=1`)).length, 1)
  })

  it('another organization gets 404; bad filters 400', async () => {
    const bob = stack.bob
    assert.equal((await stack.call(bob, 'GET', `/api/engagements/${engagement}/sla`)).status, 404)
    assert.equal((await stack.call(bob, 'GET', `/api/sla/events?engagement_id=${engagement}`)).status, 404)
    const own = await stack.call(bob, 'GET', '/api/sla/events')
    assert.equal(own.status, 200, own.text)
    assert.equal(own.body.total, 0)
    for (const query of [
      'type=sla.nope',
      'from=yesterday',
      'from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z',
      'limit=0',
      'offset=-1',
      'color=red',
    ]) {
      const res = await stack.call(stack.alice, 'GET', `/api/sla/events?${query}`)
      assert.equal(res.status, 400, `${query}: ${res.text}`)
    }
  })
})
