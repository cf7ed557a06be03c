import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { b64uEncode } from '@svc/trust/base64url'
import type { Ed25519KeyPair } from '@svc/trust/ed25519'
import { signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { Receiver, until } from './sla-helpers.ts'

interface Credit {
  id: string
  breach_event_id: string
  term: string
  period: { from: string; to: string }
  fees_fils: number
  credit_bps: number
  owed_fils: number
  amount_fils: number
  transfer_id: string | null
  receipt_leaf_hash: string
  event_id: string
}
interface SlaEvent {
  id: string
  event_id: string
  type: string
  term: string
  measured: number | null
  evidence: { task_ids: string[]; receipt_leaf_hashes: string[]; incident_ids?: string[] }
  credit: Credit | null
}
interface Measurement {
  term: string
  target: number
  measured: number | null
  status: string
  evidence: { task_ids: string[]; incident_ids?: string[] }
}
interface Line {
  transfer_id: string
  transfer_kind: string
  kind: string
  wallet: { amount_fils: number }
  held: { amount_fils: number }
  counter_account: string | null
  engagement_id: string | null
  receipts: Array<{ type: string; leaf_hash: string }>
  sla_credit: { id: string; breach_event_id: string; term: string } | null
}

const monthStart = (at: Date, plus = 0) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + plus, 1))

/** The latency target the rental offers here (ms), and the agents' delay: every task is late. */
const TARGET_MS = 300
const DELAY_MS = 700

describe('SLA credits: breaches of an ended period credited once on the rail and in the statement', () => {
  let stack: FullStack
  let operator: Client
  const receiver = new Receiver()
  let engagement = ''
  let agent = ''
  let key: Ed25519KeyPair
  // the rental's clock: moved into the next month to end the period
  let skew = 0
  const now = () => new Date(Date.now() + skew)
  const started = new Date()

  const sign = (body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
  const sla = async () => {
    const res = await stack.call(stack.alice, 'GET', `/api/engagements/${engagement}/sla`)
    assert.equal(res.status, 200, res.text)
    return res.body as {
      measurements: Measurement[]
      credits: { count: number; total_fils: number; items: Credit[] }
    }
  }
  const term = (m: Measurement[], name: string) => m.find((x) => x.term === name)!
  const breaches = async () => {
    const res = await stack.call(
      stack.alice,
      'GET',
      `/api/sla/events?engagement_id=${engagement}&type=sla.breached`,
    )
    assert.equal(res.status, 200, res.text)
    return res.body.events as SlaEvent[]
  }
  const run = (who: Client) => stack.call(who, 'POST', '/api/sla/credits/run', {})

  /** A task of the slowed agent, its escrow signed when offered and then released (the period's fees). */
  const slowTaskReleased = async (text: string) => {
    const res = await stack.call(stack.alice, 'POST', '/api/tasks', { engagement_id: engagement, text })
    assert.equal(res.status, 200, res.text)
    assert.equal((res.body.task as { state: string }).state, 'completed', res.text)
    const escrow = res.body.escrow as { state: string; hash: string; body: unknown } | null
    if (escrow?.state === 'offered') {
      const signed = await stack.call(stack.alice, 'POST', `/api/engagements/${engagement}/signatures`, {
        escrow_signatures: [{ escrow_hash: escrow.hash, signature: sign(escrow.body) }],
      })
      assert.equal(signed.status, 200, signed.text)
    }
    const pending = await stack.call(stack.alice, 'GET', `/api/engagements/${engagement}/releases/pending`)
    const [r] = pending.body.releases as Array<{ escrow: { hash: string }; instruction: unknown }>
    const released = await stack.call(stack.alice, 'POST', `/api/engagements/${engagement}/releases`, {
      escrow_hash: r!.escrow.hash,
      instruction: { body: r!.instruction, signature: sign(r!.instruction) },
    })
    assert.equal(released.status, 200, released.text)
  }

  before(async () => {
    await receiver.start()
    stack = await startFullStack(
      {
        RENTAL_SLA_LATENCY_P95_MS: String(TARGET_MS),
        RENTAL_OPERATORS: 'another-client',
        // the job's own timer stays out of the way: the test runs it (and runs it at once twice)
        RENTAL_SLA_CREDIT_CHECK_MS: '86400000',
        // the clock moves into the next month: sessions outlive that
        RENTAL_SESSION_TTL_HOURS: '720',
      },
      { now, agentsEnv: { AGENTS_DELAY_MS: String(DELAY_MS) } },
    )
    operator = stack.bob
    agent = await stack.agentOf('job_summary')
    key = stack.newClientKey()
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', agent, key)
    const hook = await stack.call(stack.alice, 'POST', '/api/webhooks', {
      url: receiver.url,
      event_types: ['sla.breached', 'sla.credited'],
    })
    assert.equal(hook.status, 201, hook.text)
    receiver.secret = hook.body.secret as string
  })
  after(async () => {
    await stack?.close()
    await receiver.close()
  })

  it('the slowed agent breaches the latency term: the event arrives by a verified webhook', async () => {
    await slowTaskReleased('A summary the slowed agent takes its time over.')
    await slowTaskReleased('Another summary, as slow as the first.')
    const [breach] = await until('the latency breach is recorded', async () => {
      const list = await breaches()
      return list.length > 0 ? list : undefined
    })
    assert.equal(breach!.term, 'latency_p95')
    assert.ok(breach!.measured! >= DELAY_MS, `measured ${breach!.measured}`)
    assert.equal(breach!.credit, null, 'not credited while its period runs')
    const hooked = await until('the webhook took the breach', async () =>
      receiver.received.find((r) => r.type === 'sla.breached'),
    )
    assert.equal(hooked.data.details.engagement_id, engagement)
    assert.equal(hooked.data.details.term, 'latency_p95')
  })

  it('incident response is measured: a note after the target breaches it, naming the incident', async () => {
    assert.equal(term((await sla()).measurements, 'incident_response').status, 'no_data')
    const reported = await stack.call(stack.alice, 'POST', '/api/incidents', {
      engagement_id: engagement,
      severity: 'sev2',
      summary: 'Summaries arrive late',
      impact: 'Reports wait on them',
    })
    assert.equal(reported.status, 201, reported.text)
    const incident = reported.body.id as string
    // two hours later (the target is one): the operator's first note is late
    skew += 2 * 3600_000
    const noted = await stack.call(operator, 'POST', `/api/incidents/${incident}/note`, {
      text: 'Looking into it.',
    })
    assert.equal(noted.status, 200, noted.text)
    const breach = await until('the incident response breach is recorded', async () =>
      (await breaches()).find((e) => e.term === 'incident_response'),
    )
    assert.deepEqual(breach.evidence.incident_ids, [incident])
    assert.ok(breach.measured! >= 7200)
    const measured = term((await sla()).measurements, 'incident_response')
    assert.equal(measured.status, 'breached')
    assert.equal(measured.target, 3600)
    assert.deepEqual(measured.evidence.incident_ids, [incident])
  })

  it('only operators run the job; while the period runs it credits nothing', async () => {
    const refused = await run(stack.alice)
    assert.equal(refused.status, 403, refused.text)
    assert.equal((refused.body.error as { code: string }).code, 'forbidden')
    const early = await run(operator)
    assert.equal(early.status, 200, early.text)
    assert.equal(early.body.credited, 0)
    assert.equal((await sla()).credits.count, 0)
  })

  it('at the period end each breach is credited once, however often and concurrently the job runs', async () => {
    const list = await breaches()
    assert.equal(list.length, 2)
    // the rental's clock moves into the next month: the breaches' period has ended
    skew = monthStart(now(), 1).getTime() + 60_000 - Date.now()
    const runs = await Promise.all([run(operator), run(operator), run(operator)])
    for (const r of runs) assert.equal(r.status, 200, r.text)
    assert.equal(
      runs.reduce((sum, r) => sum + (r.body.credited as number), 0),
      2,
    )
    assert.equal((await run(operator)).body.credited, 0)

    const released = await stack.db
      .selectFrom('escrows')
      .select(['amount_fils'])
      .where('engagement_id', '=', engagement)
      .where('state', '=', 'released')
      .execute()
    const fees = released.reduce((sum, e) => sum + Number(e.amount_fils), 0)
    assert.ok(fees > 0)
    // 5 % of the period's fees per breach, half up
    const owed = Math.floor((fees * 500 + 5000) / 10_000)
    const view = await sla()
    assert.equal(view.credits.count, 2)
    assert.equal(view.credits.total_fils, 2 * owed)
    const credited = await breaches()
    for (const b of credited) {
      assert.ok(b.credit, `breach ${b.event_id} credited`)
      assert.equal(b.credit.breach_event_id, b.event_id)
      assert.equal(b.credit.fees_fils, fees)
      assert.equal(b.credit.amount_fils, owed)
      assert.equal(b.credit.period.from, monthStart(started).toISOString())
    }

    // on the rail: one balanced transfer per breach, keyed by its event, to the client's wallet
    const transfers = await stack.db
      .selectFrom('rail_transfers')
      .select(['id', 'idempotency_key'])
      .where('kind', '=', 'sla_credit')
      .execute()
    assert.deepEqual(
      transfers.map((t) => t.idempotency_key).sort(),
      credited.map((b) => `sla-credit:${b.event_id}`).sort(),
    )
    for (const t of transfers) {
      const postings = await stack.db
        .selectFrom('rail_postings')
        .select(['account_id', 'amount'])
        .where('transfer_id', '=', t.id)
        .execute()
      assert.equal(
        postings.reduce((sum, p) => sum + Number(p.amount), 0),
        0,
      )
      assert.equal(
        Number(postings.find((p) => p.account_id === `wallet:${stack.alice.me.organization.id}`)?.amount),
        owed,
      )
    }

    const hooked = await until('the webhook took both credits', async () => {
      const got = receiver.received.filter((r) => r.type === 'sla.credited')
      return got.length === 2 ? got : undefined
    })
    assert.deepEqual(
      hooked.map((h) => h.data.details.breach_event_id).sort(),
      credited.map((b) => b.event_id).sort(),
    )
  })

  it('the statement shows the credit lines once, and still reconciles', async () => {
    // the transfers carry the database's time: the statement of the months around the real now
    const from = monthStart(new Date())
    const to = monthStart(new Date(), 1)
    const res = await stack.call(
      stack.alice,
      'GET',
      `/api/statements?from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`,
    )
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.reconciles, true)
    const lines = (res.body.movements as Line[]).filter((l) => l.transfer_kind === 'sla_credit')
    const credits = (await sla()).credits.items
    assert.equal(new Set(lines.map((l) => l.transfer_id)).size, 2)
    assert.deepEqual(
      [...new Set(lines.map((l) => l.transfer_id))].sort(),
      credits.map((c) => c.transfer_id).sort(),
    )
    for (const l of lines) {
      assert.equal(l.kind, 'adjustment')
      assert.equal(l.engagement_id, engagement)
      assert.equal(l.held.amount_fils, 0)
      const credit = credits.find((c) => c.transfer_id === l.transfer_id)!
      assert.deepEqual(l.sla_credit, {
        id: credit.id,
        breach_event_id: credit.breach_event_id,
        term: credit.term,
      })
      assert.deepEqual(l.receipts, [{ type: 'sla.credited', leaf_hash: credit.receipt_leaf_hash }])
    }
    assert.equal(
      lines.reduce((sum, l) => sum + l.wallet.amount_fils, 0),
      credits.reduce((sum, c) => sum + c.amount_fils, 0),
    )
    const csv = await stack.call(
      stack.alice,
      'GET',
      `/api/statements?format=csv&from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`,
    )
    assert.equal(csv.status, 200)
    assert.equal(csv.text.match(/,sla_credit,/g)?.length, lines.length)
  })

  it('another organization sees none of it; bad input is 400', async () => {
    const other = await stack.call(stack.bob, 'GET', `/api/engagements/${engagement}/sla`)
    assert.equal(other.status, 404)
    const bad = await stack.call(operator, 'POST', '/api/sla/credits/run', { period: 'now' })
    assert.equal(bad.status, 400, bad.text)
  })

  it('an unanswered incident past its target breaches the term once, however many measures run at once', async () => {
    const other = await stack.hireAndSign(stack.alice, 'job_summary', agent, stack.newClientKey())
    const reported = await stack.call(stack.alice, 'POST', '/api/incidents', {
      engagement_id: other,
      severity: 'sev3',
      summary: 'Nobody answers',
      impact: 'None yet',
    })
    assert.equal(reported.status, 201, reported.text)
    // two hours unanswered (the target is one): each run of the job measures the engagement again
    skew += 2 * 3600_000
    const runs = await Promise.all([run(operator), run(operator), run(operator)])
    for (const r of runs) assert.equal(r.status, 200, r.text)
    const events = await stack.call(stack.alice, 'GET', `/api/sla/events?engagement_id=${other}`)
    assert.equal(events.status, 200, events.text)
    assert.deepEqual(
      (events.body.events as SlaEvent[]).map((e) => [e.type, e.term, e.evidence.incident_ids]),
      [['sla.breached', 'incident_response', [reported.body.id]]],
    )
  })
})
