import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { type Answer, type FullStack, startFullStack } from '../support/full-stack.ts'

interface Rating {
  id: string
  task_id: string
  score: number
  comment: string | null
  receipt: { id: string; leaf_hash: string }
  edits: number
  editable_until: string
}
interface AgentRatings {
  count: number
  mean: number | null
  distribution: Record<string, number>
  ratings: Array<{ score: number; comment: string | null; leaf_hash: string; edited: boolean }>
  total: number
}

const codeOf = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code
const messageOf = (a: Answer) => (a.body.error as { message?: string } | undefined)?.message ?? ''

describe('rental ratings and references: bound to receipts, once, an edit window, consent to be named', () => {
  let s: FullStack
  let agentDid = ''
  let engagementId = ''
  let heldEngagement = ''
  let heldTask = ''
  // the rental's clock runs `skew` ms ahead of the wall clock (the edit window's end)
  let skew = 0

  const runTask = async (engagement = engagementId) => {
    const res = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagement,
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
    })
    const task = res.body.task as { id: string; state: string }
    assert.equal(task.state, 'completed', res.text)
    return task.id
  }
  const rate = (taskId: string, body: Record<string, unknown>, who = s.alice) =>
    s.call(who, 'POST', `/api/tasks/${taskId}/rating`, body)

  before(async () => {
    s = await startFullStack(
      { RENTAL_RATING_EDIT_WINDOW_S: '3600' },
      { now: () => new Date(Date.now() + skew) },
    )
    agentDid = await s.agentOf('job_summary')
    engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    // a second engagement whose policy holds every task for approval: its task never completes
    heldEngagement = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const config = await s.call(s.alice, 'POST', `/api/engagements/${heldEngagement}/config`, {
      approval: { mode: 'always' },
    })
    assert.equal(config.status, 200, config.text)
    const held = await s.call(s.alice, 'POST', '/api/tasks', { engagement_id: heldEngagement, text: 'Held.' })
    heldTask = (held.body.task as { id: string }).id
  })
  after(async () => s?.close())

  it('refuses a task that has not completed (naming its state), another organization’s task, and bad input', async () => {
    const held = await rate(heldTask, { score: 5 })
    assert.deepEqual([held.status, codeOf(held)], [409, 'task_not_rateable'], held.text)
    assert.match(messageOf(held), /input-required/)
    const taskId = await runTask()
    const other = await rate(taskId, { score: 1 }, s.bob)
    assert.deepEqual([other.status, codeOf(other)], [404, 'task_not_found'])
    for (const body of [
      { score: 0 },
      { score: 6 },
      { score: 2.5 },
      { score: '5' },
      {},
      { score: 3, comment: 'x'.repeat(1001) },
      { score: 3, extra: true },
      { score: 3, edit: 'yes' },
    ]) {
      const bad = await rate(taskId, body)
      assert.equal(bad.status, 400, `${JSON.stringify(body).slice(0, 60)}: ${bad.text}`)
    }
    const unknown = await rate('task_nope', { score: 3 })
    assert.deepEqual([unknown.status, codeOf(unknown)], [404, 'task_not_found'])
    const noCsrf = await s.call(s.alice, 'POST', `/api/tasks/${taskId}/rating`, { score: 3 }, { csrf: false })
    assert.equal(noCsrf.status, 403)
    // nothing was recorded by any of those
    const { rows } = await sql<{ n: string }>`select count(*) as n from task_ratings`.execute(s.db)
    assert.equal(Number(rows[0]!.n), 0)
  })

  it('a free trial task, completed with its receipt, is not rateable: ratings stand on paid work', async () => {
    // alice is an operator here (the development default): she lists the built-in agent
    const listing = await s.call(s.alice, 'POST', '/api/market/listings', {
      agent_did: agentDid,
      title: 'Digest trial',
      description: 'A listing to try the agent.',
      price_fils: 2500,
    })
    assert.equal(listing.status, 200, listing.text)
    const trial = await s.call(s.alice, 'POST', '/api/trials', { listing_id: listing.body.id })
    assert.equal(trial.status, 201, trial.text)
    const run = await s.call(s.alice, 'POST', `/api/trials/${trial.body.id as string}/tasks`, {
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
    })
    const task = run.body.task as { id: string; state: string; engagement_id: string | null }
    assert.deepEqual([task.state, task.engagement_id], ['completed', null], run.text)
    const rated = await rate(task.id, { score: 5 })
    assert.deepEqual([rated.status, codeOf(rated)], [409, 'task_not_rateable'], rated.text)
    assert.match(messageOf(rated), /trial/)
  })

  it('rates once, bound to the task’s receipt; a second is 409; edits within the window are recorded', async () => {
    const taskId = await runTask()
    const task = await s.call(s.alice, 'GET', `/api/tasks/${taskId}`)
    const receipt = task.body.receipt as { id: string; leaf_hash: string }
    const made = await rate(taskId, { score: 4, comment: '  Clear and short.  ' })
    assert.equal(made.status, 200, made.text)
    const rating = made.body as unknown as Rating
    assert.equal(rating.score, 4)
    assert.equal(rating.comment, 'Clear and short.')
    assert.deepEqual(rating.receipt, { id: receipt.id, leaf_hash: receipt.leaf_hash })
    assert.equal(rating.edits, 0)
    const again = await rate(taskId, { score: 1 })
    assert.deepEqual([again.status, codeOf(again)], [409, 'already_rated'])
    assert.match(messageOf(again), /edit: true/)
    const edited = await rate(taskId, { score: 5, comment: 'Better on a second read.', edit: true })
    assert.equal(edited.status, 200, edited.text)
    assert.deepEqual(
      [(edited.body as unknown as Rating).score, (edited.body as unknown as Rating).edits],
      [5, 1],
    )
    assert.equal((edited.body as unknown as Rating).id, rating.id)
    // an edit of a task with no rating is a move the state does not allow
    const unrated = await rate(await runTask(), { score: 2, edit: true })
    assert.deepEqual([unrated.status, codeOf(unrated)], [409, 'not_rated'])
    const { rows } = await sql<{ type: string; data: { from?: { score: number } } }>`
      select type, data from rental_events where subjects->>'rating_id' = ${rating.id} order by seq`.execute(
      s.db,
    )
    assert.deepEqual(
      rows.map((r) => r.type),
      ['rating.created', 'rating.edited'],
    )
    assert.equal(rows[1]!.data.from!.score, 4)
  })

  it('concurrent first ratings of one task settle on one', async () => {
    const taskId = await runTask()
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => rate(taskId, { score: (i % 5) + 1 })),
    )
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, 409, 409, 409, 409, 409, 409, 409],
      answers.map((a) => a.text).join('\n'),
    )
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from task_ratings where task_id = ${taskId}`.execute(s.db)
    assert.equal(Number(rows[0]!.n), 1)
  })

  it('the agent’s ratings: count, mean, distribution, leaf hashes, paged; every client reads them; the CV carries them', async () => {
    const res = await s.call(s.bob, 'GET', `/api/agents/${agentDid}/ratings?limit=2`)
    assert.equal(res.status, 200, res.text)
    const body = res.body as unknown as AgentRatings
    const { rows } = await sql<{ score: number; receipt_leaf_hash: string }>`
      select score, receipt_leaf_hash from task_ratings where agent_did = ${agentDid}`.execute(s.db)
    const expected: Record<string, number> = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 }
    for (const r of rows) expected[String(r.score)]!++
    assert.equal(body.count, rows.length)
    assert.ok(body.count >= 2)
    assert.deepEqual(body.distribution, expected)
    const mean = rows.reduce((sum, r) => sum + Number(r.score), 0) / rows.length
    assert.equal(body.mean, Math.round(mean * 100) / 100)
    assert.equal(body.ratings.length, 2)
    assert.equal(body.total, rows.length)
    for (const r of body.ratings) {
      assert.ok(rows.some((row) => row.receipt_leaf_hash === r.leaf_hash))
      assert.ok(!('task_id' in r) && !('org_id' in r), 'no task or organization named')
    }
    const none = await s.call(
      s.alice,
      'GET',
      '/api/agents/did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK/ratings',
    )
    assert.equal(none.status, 200, none.text)
    assert.deepEqual([none.body.count, none.body.mean], [0, null])
    const badDid = await s.call(s.alice, 'GET', '/api/agents/did:web:example.com/ratings')
    assert.equal(badDid.status, 400)
    const cv = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/cv`)
    assert.equal(cv.status, 200, cv.text)
    const doc = cv.body.cv as { ratings: { count: number; distribution: Record<string, number> } }
    assert.deepEqual([doc.ratings.count, doc.ratings.distribution], [body.count, body.distribution])
    assert.equal((cv.body.verification as { verified: boolean }).verified, true)
  })

  it('references: after a completed task only, one per engagement (again: updated), named only with consent', async () => {
    const before = await s.call(s.alice, 'GET', `/api/engagements/${heldEngagement}/reference`)
    assert.equal(before.status, 200, before.text)
    assert.deepEqual([before.body.may_publish, before.body.reference], [false, null])
    const early = await s.call(s.alice, 'POST', `/api/engagements/${heldEngagement}/reference`, {
      statement: 'Good so far.',
      show_organization: true,
    })
    assert.deepEqual([early.status, codeOf(early)], [409, 'reference_not_allowed'])
    const anonymous = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/reference`, {
      statement: 'Summaries we could trust, every receipt on the ledger.',
      show_organization: false,
    })
    assert.equal(anonymous.status, 200, anonymous.text)
    assert.equal(anonymous.body.version, 1)
    let list = await s.call(s.bob, 'GET', `/api/agents/${agentDid}/references`)
    assert.equal(list.status, 200, list.text)
    let refs = list.body.references as Array<{ statement: string; organization: unknown; anonymous: boolean }>
    assert.deepEqual(refs, [
      {
        ...refs[0]!,
        statement: 'Summaries we could trust, every receipt on the ledger.',
        organization: null,
        anonymous: true,
      },
    ])
    assert.ok(!list.text.includes(s.alice.me.organization.id), 'no organization id shown')
    const named = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/reference`, {
      statement: 'We renewed twice.',
      show_organization: true,
    })
    assert.equal(named.status, 200, named.text)
    assert.equal(named.body.version, 2)
    list = await s.call(s.bob, 'GET', `/api/agents/${agentDid}/references`)
    refs = list.body.references as typeof refs
    assert.equal(refs.length, 1)
    const orgName = (
      await s.db
        .selectFrom('orgs')
        .select('name')
        .where('id', '=', s.alice.me.organization.id)
        .executeTakeFirstOrThrow()
    ).name
    assert.deepEqual([refs[0]!.organization, refs[0]!.anonymous], [{ name: orgName }, false])
    const mine = await s.call(s.alice, 'GET', `/api/engagements/${engagementId}/reference`)
    assert.equal((mine.body.reference as { statement: string }).statement, 'We renewed twice.')
    const theirs = await s.call(s.bob, 'GET', `/api/engagements/${engagementId}/reference`)
    assert.deepEqual([theirs.status, codeOf(theirs)], [404, 'engagement_not_found'])
    const post = await s.call(s.bob, 'POST', `/api/engagements/${engagementId}/reference`, {
      statement: 'Not ours.',
      show_organization: false,
    })
    assert.deepEqual([post.status, codeOf(post)], [404, 'engagement_not_found'])
    for (const body of [
      { statement: '', show_organization: true },
      { statement: 'x'.repeat(2001), show_organization: true },
      { statement: 'ok' },
      { statement: 'ok', show_organization: 'yes' },
    ]) {
      const bad = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/reference`, body)
      assert.equal(bad.status, 400, bad.text)
    }
    const blank = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/reference`, {
      statement: '   ',
      show_organization: true,
    })
    assert.deepEqual([blank.status, codeOf(blank)], [400, 'invalid_request'])
    const { rows } = await sql<{ type: string }>`
      select type from rental_events where type like 'reference.%' and subjects->>'engagement_id' = ${engagementId}
      order by seq`.execute(s.db)
    assert.deepEqual(
      rows.map((r) => r.type),
      ['reference.published', 'reference.updated'],
    )
    const cv = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/cv`)
    const doc = cv.body.cv as { references: { total: number; latest: Array<{ statement: string }> } }
    assert.deepEqual([doc.references.total, doc.references.latest[0]!.statement], [1, 'We renewed twice.'])
  })

  it('an edit after the window is 409 naming when it closed', async () => {
    const taskId = await runTask()
    const made = await rate(taskId, { score: 3 })
    assert.equal(made.status, 200, made.text)
    skew = 2 * 3600 * 1000
    try {
      const late = await rate(taskId, { score: 4, edit: true })
      assert.deepEqual([late.status, codeOf(late)], [409, 'rating_edit_closed'], late.text)
      assert.match(messageOf(late), new RegExp((made.body as unknown as Rating).editable_until))
    } finally {
      skew = 0
    }
  })
})
