import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { type LedgerReceipt, receiptsAbout } from '@svc/testing/ledger'
import { type Answer, type FullStack, startFullStack, WRITER } from '../support/full-stack.ts'

interface Trial {
  id: string
  state: 'active' | 'exhausted' | 'expired' | 'converted'
  listing: { id: string; title: string; agent_did: string; price: { amount_fils: number; display: string } }
  agent_did: string
  tasks_allowed: number
  tasks_used: number
  tasks_left: number
  ends_at: string
  engagement_id: string | null
  tasks?: Array<{ id: string; state: string; receipt_id: string | null }>
}
interface Hired {
  trial: Trial
  engagement: {
    id: string
    state: string
    job_id: string
    agent_did: string
    price_fils: number
    sla: { body: Record<string, unknown> }
    escrows: Array<{ state: string; amount_fils: number }>
  }
  package: { sla: { body: Record<string, unknown> }; escrows: Array<{ body: Record<string, unknown> }> }
}

const DAY = 86_400_000

describe('trials: free tasks of a market listing, counted atomically, converted once into a hire', () => {
  let stack: FullStack
  let offset = 0
  let summaryDid: string
  let invoiceDid: string
  let digest: string
  let checks: string
  let trial: Trial
  let clientDid: string

  const code = (res: Answer) => (res.body.error as { code?: string } | undefined)?.code
  const message = (res: Answer) => (res.body.error as { message?: string } | undefined)?.message ?? ''
  const publish = async (agentDid: string, title: string, sla: Record<string, unknown>) => {
    const res = await stack.call(stack.alice, 'POST', '/api/market/listings', {
      agent_did: agentDid,
      title,
      description: `${title}: a listing to try before hiring.`,
      price_fils: 2500,
      sla,
    })
    assert.equal(res.status, 200, res.text)
    return (res.body as { id: string }).id
  }
  const start = (who = stack.alice, listing = digest, extra: Record<string, unknown> = {}) =>
    stack.call(who, 'POST', '/api/trials', { listing_id: listing, ...extra })
  const text = 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.'

  before(async () => {
    // alice and bob are operators: they publish listings of the platform's built-in agents
    stack = await startFullStack(
      { RENTAL_OPERATORS: 'demo@svc.local', RENTAL_SESSION_TTL_HOURS: '720' },
      { now: () => new Date(Date.now() + offset) },
    )
    summaryDid = await stack.agentOf('job_summary')
    invoiceDid = await stack.agentOf('job_invoice_check')
    digest = await publish(summaryDid, 'Ledger digest', { trial_tasks: 3, response_seconds: 60 })
    checks = await publish(invoiceDid, 'Invoice checks', { trial_days: 2 })
    clientDid = didKeyFromEd25519(stack.newClientKey().publicKey)
  })
  after(async () => stack?.close())

  it('starts a trial of a listing: its terms, the window, no escrow; a second live one is 409 naming it', async () => {
    const res = await start(stack.alice, digest, { client_did: clientDid })
    assert.equal(res.status, 201, res.text)
    trial = res.body as unknown as Trial
    assert.equal(trial.state, 'active')
    assert.equal(trial.listing.id, digest)
    assert.equal(trial.listing.price.amount_fils, 2500)
    assert.equal(trial.agent_did, summaryDid)
    assert.deepEqual([trial.tasks_allowed, trial.tasks_used, trial.tasks_left], [3, 0, 3])
    const window = Date.parse(trial.ends_at) - Date.now()
    assert.ok(window > 7 * DAY - 60_000 && window <= 7 * DAY, trial.ends_at)
    const again = await start()
    assert.equal(again.status, 409, again.text)
    assert.equal(code(again), 'trial_exists')
    assert.match(message(again), new RegExp(`${trial.id}.*active`))
    const started = await stack.db
      .selectFrom('rental_events')
      .select('subjects')
      .where('type', '=', 'trial.started')
      .execute()
    assert.deepEqual(
      started.map((e) => (e.subjects as Record<string, string>).trial_id),
      [trial.id],
    )
  })

  it('runs three free tasks through the one dispatch, receipted on the ledger with trial: true; the fourth is 409', async () => {
    const tasks: Array<{ id: string; receipt: { id: string } | null; escrow_id: string | null }> = []
    for (let i = 0; i < 3; i++) {
      const res = await stack.call(stack.alice, 'POST', `/api/trials/${trial.id}/tasks`, { text })
      assert.equal(res.status, 200, res.text)
      const task = res.body.task as {
        id: string
        state: string
        engagement_id: string | null
        trial_id: string
        price_fils: number
        escrow_id: string | null
        receipt: { id: string } | null
      }
      assert.equal(task.state, 'completed', res.text)
      assert.equal(task.engagement_id, null)
      assert.equal(task.trial_id, trial.id)
      assert.equal(task.price_fils, 0)
      assert.equal(task.escrow_id, null)
      assert.equal((res.body.trial as Trial).tasks_left, 2 - i)
      tasks.push(task)
    }
    const fourth = await stack.call(stack.alice, 'POST', `/api/trials/${trial.id}/tasks`, { text })
    assert.equal(fourth.status, 409, fourth.text)
    assert.equal(code(fourth), 'trial_exhausted')
    // on the ledger: task.completed, marked trial, with the trial's id and no price
    const [found] = await receiptsAbout(
      { url: stack.ledger.url, writer: WRITER },
      tasks[0]!.id,
      (r) => r.length > 0,
    )
    const receipt = (found as LedgerReceipt).receipt
    assert.equal(receipt.type, 'task.completed')
    assert.equal(receipt.data.trial, true)
    assert.equal(receipt.data.trial_id, trial.id)
    assert.equal(receipt.data.price_fils, 0)
    assert.equal(receipt.data.agent_did, summaryDid)
    // no escrow, no charge: nothing on the rail for these tasks
    const escrows = await stack.db
      .selectFrom('escrows')
      .select('id')
      .where(
        'task_id',
        'in',
        tasks.map((t) => t.id),
      )
      .execute()
    assert.equal(escrows.length, 0)
    const read = await stack.call(stack.alice, 'GET', `/api/trials/${trial.id}`)
    assert.equal(read.status, 200, read.text)
    trial = read.body as unknown as Trial
    assert.equal(trial.state, 'exhausted')
    assert.deepEqual(
      trial.tasks!.map((t) => t.receipt_id),
      tasks.map((t) => t.receipt!.id),
    )
    const counted = await stack.db
      .selectFrom('rental_events')
      .select('data')
      .where('type', '=', 'trial.task')
      .execute()
    assert.deepEqual(counted.map((e) => (e.data as { tasks_left: number }).tasks_left).sort(), [0, 1, 2])
  })

  it('converts into the pending engagement and package hiring makes, the trial named in the SLA body; once', async () => {
    const res = await stack.call(stack.alice, 'POST', `/api/trials/${trial.id}/convert`, {
      job_id: 'job_summary',
    })
    assert.equal(res.status, 200, res.text)
    const hired = res.body as unknown as Hired
    assert.equal(hired.trial.state, 'converted')
    assert.equal(hired.trial.engagement_id, hired.engagement.id)
    assert.equal(hired.engagement.state, 'pending')
    assert.equal(hired.engagement.agent_did, summaryDid)
    // the trial's client DID signs the engagement's bodies
    assert.equal(hired.package.sla.body.client_did, clientDid)
    assert.deepEqual(hired.package.sla.body.trial, {
      trial_id: trial.id,
      tasks_used: 3,
      task_ids: trial.tasks!.map((t) => t.id),
      receipt_ids: trial.tasks!.map((t) => t.receipt_id),
    })
    // as a plain hire of the same job: the same SLA terms and one package escrow of the job's price
    const plain = await stack.call(stack.alice, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: summaryDid,
      client_did: clientDid,
    })
    assert.equal(plain.status, 200, plain.text)
    const hire = plain.body as unknown as Hired
    const { trial: _t, engagement_id: _e, issued_at: _i, ...terms } = hired.package.sla.body
    const { engagement_id: _pe, issued_at: _pi, ...plainTerms } = hire.package.sla.body
    assert.deepEqual(terms, plainTerms)
    assert.equal(hired.package.escrows.length, hire.package.escrows.length)
    assert.equal(hired.engagement.price_fils, hire.engagement.price_fils)
    // again: the same engagement; the converted trial takes no task
    const again = await stack.call(stack.alice, 'POST', `/api/trials/${trial.id}/convert`, {
      job_id: 'job_summary',
    })
    assert.equal(again.status, 200, again.text)
    assert.equal((again.body as unknown as Hired).engagement.id, hired.engagement.id)
    const task = await stack.call(stack.alice, 'POST', `/api/trials/${trial.id}/tasks`, { text })
    assert.equal(task.status, 409, task.text)
    assert.equal(code(task), 'trial_converted')
    assert.match(message(task), new RegExp(hired.engagement.id))
    // a new trial of the listing may start: the converted one is not live
    const next = await start()
    assert.equal(next.status, 201, next.text)
  })

  it('twenty concurrent trial tasks against three remaining: exactly three pass; concurrent converts make one engagement', async () => {
    const res = await start(stack.alice, checks, { client_did: clientDid })
    assert.equal(res.status, 201, res.text)
    const t = res.body as unknown as Trial
    assert.equal(t.tasks_allowed, 3)
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stack.call(stack.alice, 'POST', `/api/trials/${t.id}/tasks`, {
          text: `Invoice ${i}: 100 AED.`,
          async: true,
        }),
      ),
    )
    const statuses = answers.map((a) => a.status)
    assert.equal(statuses.filter((s) => s === 200).length, 3, JSON.stringify(statuses))
    assert.equal(statuses.filter((s) => s === 409).length, 17)
    assert.ok(answers.filter((a) => a.status === 409).every((a) => code(a) === 'trial_exhausted'))
    const rows = await stack.db.selectFrom('tasks').select('id').where('trial_id', '=', t.id).execute()
    assert.equal(rows.length, 3)
    const converts = await Promise.all(
      Array.from({ length: 5 }, () =>
        stack.call(stack.alice, 'POST', `/api/trials/${t.id}/convert`, { job_id: 'job_invoice_check' }),
      ),
    )
    assert.ok(
      converts.every((c) => c.status === 200),
      converts.map((c) => c.text).join('\n'),
    )
    const ids = new Set(converts.map((c) => (c.body as unknown as Hired).engagement.id))
    assert.equal(ids.size, 1)
    const made = await stack.db
      .selectFrom('engagements')
      .select('id')
      .where('agent_did', '=', invoiceDid)
      .execute()
    assert.deepEqual(
      made.map((e) => e.id),
      [...ids],
    )
    const converted = await stack.db
      .selectFrom('rental_events')
      .select('subjects')
      .where('type', '=', 'trial.converted')
      .execute()
    assert.equal(converted.filter((e) => (e.subjects as { trial_id: string }).trial_id === t.id).length, 1)
  })

  it('expires with the clock: state expired, a task is 409 trial_expired, and a new trial may start', async () => {
    const res = await start(stack.bob, checks)
    assert.equal(res.status, 201, res.text)
    const t = res.body as unknown as Trial
    offset = 2 * DAY + 60_000
    try {
      const read = await stack.call(stack.bob, 'GET', `/api/trials/${t.id}`)
      assert.equal((read.body as unknown as Trial).state, 'expired')
      const task = await stack.call(stack.bob, 'POST', `/api/trials/${t.id}/tasks`, { text })
      assert.equal(task.status, 409, task.text)
      assert.equal(code(task), 'trial_expired')
      assert.match(message(task), new RegExp(t.ends_at))
      const expired = await stack.call(stack.bob, 'GET', '/api/trials?state=expired')
      assert.deepEqual(
        (expired.body.trials as Trial[]).map((x) => x.id),
        [t.id],
      )
      const active = await stack.call(stack.bob, 'GET', '/api/trials?state=active')
      assert.equal((active.body.trials as Trial[]).length, 0)
      const next = await start(stack.bob, checks)
      assert.equal(next.status, 201, next.text)
    } finally {
      offset = 0
    }
  })

  it('another organization’s trial is 404 and not listed; bad input is 400; an unavailable listing is 409', async () => {
    for (const [method, path, body] of [
      ['GET', `/api/trials/${trial.id}`, undefined],
      ['POST', `/api/trials/${trial.id}/tasks`, { text }],
      ['POST', `/api/trials/${trial.id}/convert`, { job_id: 'job_summary' }],
      ['GET', '/api/trials/trl_unknown', undefined],
    ] as const) {
      const res = await stack.call(stack.bob, method, path, body)
      assert.equal(res.status, 404, `${path}: ${res.text}`)
      assert.equal(code(res), 'trial_not_found')
    }
    const bobs = await stack.call(stack.bob, 'GET', '/api/trials?limit=100')
    assert.ok((bobs.body.trials as Trial[]).every((x) => x.id !== trial.id))
    const page = await stack.call(stack.alice, 'GET', '/api/trials?limit=1&offset=1')
    assert.equal(page.status, 200, page.text)
    assert.deepEqual([page.body.limit, page.body.offset, (page.body.trials as Trial[]).length], [1, 1, 1])
    assert.equal(page.body.total, 3)
    for (const [path, body] of [
      ['/api/trials', {}],
      ['/api/trials', { listing_id: digest, extra: 1 }],
      ['/api/trials', { listing_id: digest, client_did: 'did:key:nope' }],
      [`/api/trials/${trial.id}/tasks`, { text: '' }],
      [`/api/trials/${trial.id}/tasks`, { text: 'x'.repeat(20_001) }],
      [`/api/trials/${trial.id}/convert`, {}],
    ] as const) {
      const res = await stack.call(stack.alice, 'POST', path, body)
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body).slice(0, 80)}: ${res.text}`)
    }
    assert.equal((await stack.call(stack.alice, 'GET', '/api/trials?state=bogus')).status, 400)
    const unknown = await start(stack.alice, 'lst_unknown')
    assert.equal(unknown.status, 404, unknown.text)
    assert.equal(code(unknown), 'listing_not_found')
    // an unknown job at convert: 404, the trial stays unconverted
    const live = (await stack.call(stack.alice, 'GET', '/api/trials?state=active')).body.trials as Trial[]
    const open = live.find((x) => x.listing.id === digest)!
    const noJob = await stack.call(stack.alice, 'POST', `/api/trials/${open.id}/convert`, {
      job_id: 'job_nope',
    })
    assert.equal(noJob.status, 404, noJob.text)
    assert.equal(
      ((await stack.call(stack.alice, 'GET', `/api/trials/${open.id}`)).body as unknown as Trial).state,
      'active',
    )
    const off = await stack.call(stack.alice, 'POST', `/api/market/listings/${digest}/availability`, {
      state: 'unavailable',
    })
    assert.equal(off.status, 200, off.text)
    const refused = await start(stack.bob, digest)
    assert.equal(refused.status, 409, refused.text)
    assert.equal(code(refused), 'listing_unavailable')
  })
})
