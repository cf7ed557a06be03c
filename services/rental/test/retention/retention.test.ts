import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type LedgerReceipt, receiptsAbout } from '@svc/testing/ledger'
import { type Answer, type Client, type FullStack, startFullStack, WRITER } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

interface Hold {
  id: string
  org_id: string
  engagement_id: string | null
  scope: string
  reason_sha256: string
  placed_by: string
  receipt_id: string
  active: boolean
  released_by: string | null
}
interface Retention {
  org_id: string
  policy: Record<'tasks' | 'files' | 'events', { seconds: number; duration: string }> & {
    is_default: boolean
  }
  holds: Hold[]
}

const codeOf = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code
const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`
const DAY_MS = 86_400_000

describe('rental retention and legal holds: expired data deleted through its areas, stopped by holds, receipted', () => {
  let s: FullStack
  let operator: Client
  let admin: Client
  let member: Client
  let stranger: Client
  let orgId = ''
  let agentDid = ''
  // the rental's clock runs `skew` ms ahead of the wall clock
  let skew = 0

  const runTask = async (engagementId: string) => {
    const res = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
    })
    const task = res.body.task as { id: string; state: string }
    assert.equal(task.state, 'completed', res.text)
    return task.id
  }
  const upload = async (engagementId: string, text: string) => {
    const res = await s.alice.jar.fetch(
      `${s.rental.url}/api/engagements/${engagementId}/files?name=kept.txt`,
      {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'x-csrf-token': s.alice.csrf },
        body: text,
      },
    )
    assert.equal(res.status, 201)
    return ((await res.json()) as { id: string }).id
  }
  const output = async (taskId: string) =>
    ((await s.call(s.alice, 'GET', `/api/tasks/${taskId}`)).body.output as { text: string } | null) ?? null
  const fileStatus = async (fileId: string) =>
    (await s.alice.jar.fetch(`${s.rental.url}/api/files/${fileId}`)).status
  const outboxOf = (type: string) =>
    s.db
      .selectFrom('receipt_outbox')
      .select(['id', 'envelope'])
      .where('receipt_type', '=', type)
      .where('subject', '=', orgId)
      .execute()
  const hold = (who: Client, body: Record<string, unknown>) =>
    s.call(who, 'POST', '/api/retention/hold', body)
  const release = (who: Client, id: string, body: Record<string, unknown> = {}) =>
    s.call(who, 'POST', `/api/retention/hold/${id}/release`, body)

  before(async () => {
    s = await startFullStack(
      {
        RENTAL_OPERATORS: 'another-client',
        RENTAL_RETENTION_SWEEP_S: '1',
        RENTAL_SESSION_TTL_HOURS: '720',
        RENTAL_OUTPUT_TTL_S: '31536000',
      },
      { now: () => new Date(Date.now() + skew) },
    )
    operator = s.bob
    orgId = s.alice.me.organization.id
    for (const role of ['admin', 'member']) {
      const invited = await s.call(s.alice, 'POST', '/api/org/members', {
        email: `${role}@retention.example`,
        role,
      })
      assert.equal(invited.status, 201, invited.text)
    }
    admin = await s.signInWith('admin@retention.example')
    member = await s.signInWith('member@retention.example')
    stranger = await s.signInWith('stranger@retention.example')
    agentDid = await s.agentOf('job_summary')
  })
  after(async () => s?.close())

  it('shows the defaults, takes ISO 8601 durations or seconds within bounds, refuses bad input with 400', async () => {
    const shown = await s.call(s.alice, 'GET', '/api/retention')
    assert.equal(shown.status, 200, shown.text)
    const view = shown.body as unknown as Retention
    assert.equal(view.policy.is_default, true)
    assert.deepEqual(view.policy.tasks, { seconds: 180 * 86_400, duration: 'P180D' })
    assert.deepEqual(view.policy.files, { seconds: 365 * 86_400, duration: 'P365D' })
    for (const [body, code] of [
      [{ tasks: 'P1Y' }, 'invalid_retention'],
      [{ tasks: 'P1M' }, 'invalid_retention'],
      [{ tasks: 'P1DT' }, 'invalid_retention'],
      [{ tasks: 'P' }, 'invalid_request'],
      [{ tasks: 'PT' }, 'invalid_retention'],
      [{ tasks: 60 }, 'invalid_retention'],
      [{ files: 'PT1H' }, 'invalid_retention'],
      [{ events: 3651 * 86_400 }, 'invalid_retention'],
      [{ events: -86_400 }, 'invalid_retention'],
      [{ tasks: 1.5 }, 'invalid_request'],
      [{ tasks: true }, 'invalid_request'],
      [{ kept: 'P1D' }, 'invalid_request'],
      [{}, 'nothing_to_change'],
    ] as const) {
      const res = await s.call(s.alice, 'POST', '/api/retention', body)
      assert.deepEqual([res.status, codeOf(res)], [400, code], `${JSON.stringify(body)}: ${res.text}`)
    }
    const set = await s.call(s.alice, 'POST', '/api/retention', { tasks: 'P1DT12H', files: 172_800 })
    assert.equal(set.status, 200, set.text)
    const policy = (set.body as unknown as Retention).policy
    assert.deepEqual(policy.tasks, { seconds: 129_600, duration: 'P1DT12H' })
    assert.deepEqual(policy.files, { seconds: 172_800, duration: 'P2D' })
    assert.deepEqual(policy.events, { seconds: 400 * 86_400, duration: 'P400D' })
    assert.equal(policy.is_default, false)
    // holds: a blank reason, an unknown field, an unknown or another organization's engagement
    assert.equal((await hold(s.alice, { reason: '' })).status, 400)
    assert.deepEqual(codeOf(await hold(s.alice, { reason: '   ' })), 'invalid_request')
    assert.equal((await hold(s.alice, { reason: 'r', scope: 'all' })).status, 400)
    const unknown = await hold(s.alice, { reason: 'r', engagement_id: 'eng_nope' })
    assert.deepEqual([unknown.status, codeOf(unknown)], [404, 'engagement_not_found'])
  })

  it('lets owners and admins read and set the policy, only the owner or an operator hold; another organization gets 404', async () => {
    assert.equal((await s.call(admin, 'GET', '/api/retention')).status, 200)
    assert.equal((await s.call(admin, 'POST', '/api/retention', { events: 'P30D' })).status, 200)
    for (const [method, path, body] of [
      ['GET', '/api/retention', undefined],
      ['POST', '/api/retention', { events: 'P30D' }],
      ['POST', '/api/retention/hold', { reason: 'Case 1' }],
    ] as const) {
      const res = await s.call(member, method, path, body)
      assert.deepEqual([res.status, codeOf(res)], [403, 'forbidden'], `member ${method} ${path}`)
    }
    const byAdmin = await hold(admin, { reason: 'Case 1' })
    assert.deepEqual([byAdmin.status, codeOf(byAdmin)], [403, 'forbidden'])
    assert.match(byAdmin.text, /retention:hold/)

    // an operator holds alice's organization; the owner cannot release an operator's hold
    const placed = await hold(operator, { reason: 'Case 2 of the regulator', org_id: orgId })
    assert.equal(placed.status, 201, placed.text)
    const opHold = placed.body as unknown as Hold
    assert.deepEqual(
      [opHold.org_id, opHold.placed_by, opHold.scope, opHold.active],
      [orgId, 'operator', 'organization', true],
    )
    assert.equal(opHold.reason_sha256, sha256('Case 2 of the regulator'))
    const listed = (await s.call(s.alice, 'GET', '/api/retention')).body as unknown as Retention
    assert.ok(listed.holds.some((h) => h.id === opHold.id && h.active))
    const byOwner = await release(s.alice, opHold.id)
    assert.deepEqual([byOwner.status, codeOf(byOwner)], [403, 'forbidden'])

    // another organization: alice's org, engagement and hold are not found
    const peek = await s.call(stranger, 'GET', `/api/retention?org_id=${orgId}`)
    assert.deepEqual([peek.status, codeOf(peek)], [404, 'org_not_found'])
    const foreign = await hold(stranger, { reason: 'r', org_id: orgId })
    assert.deepEqual([foreign.status, codeOf(foreign)], [404, 'org_not_found'])
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const theirs = await hold(stranger, { reason: 'r', engagement_id: engagementId })
    assert.deepEqual([theirs.status, codeOf(theirs)], [404, 'engagement_not_found'])
    const releaseTheirs = await release(stranger, opHold.id)
    assert.deepEqual([releaseTheirs.status, codeOf(releaseTheirs)], [404, 'hold_not_found'])
    assert.equal((await release(s.alice, 'hld_nope')).status, 404)
    // the operator reads alice's retention and releases the hold, once
    const opView = await s.call(operator, 'GET', `/api/retention?org_id=${orgId}`)
    assert.equal((opView.body as unknown as Retention).org_id, orgId)
    const released = await release(operator, opHold.id, { reason: 'Case 2 closed' })
    assert.equal(released.status, 200, released.text)
    assert.deepEqual(
      [(released.body as unknown as Hold).active, (released.body as unknown as Hold).released_by],
      [false, 'operator'],
    )
    const again = await release(operator, opHold.id)
    assert.deepEqual([again.status, codeOf(again)], [409, 'hold_released'])
  })

  it('deletes nothing under a hold; once released, the next run deletes the expired texts, files and events, receipted on the ledger', async () => {
    const kept = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const heldEngagement = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const taskId = await runTask(kept)
    const heldTask = await runTask(heldEngagement)
    const fileId = await upload(kept, 'A file kept one day.')
    const heldFile = await upload(heldEngagement, 'A file under an engagement’s hold.')
    assert.equal(
      (await s.call(s.alice, 'POST', '/api/retention', { tasks: 'P1D', files: 'P1D', events: 86_400 }))
        .status,
      200,
    )
    const engagementHold = (await hold(s.alice, { reason: 'Engagement case', engagement_id: heldEngagement }))
      .body as unknown as Hold
    assert.equal(engagementHold.scope, 'engagement')
    const placed = await hold(s.alice, { reason: 'Litigation about Jane Doe' })
    assert.equal(placed.status, 201, placed.text)
    const orgHold = placed.body as unknown as Hold
    assert.equal(orgHold.placed_by, 'owner')

    // the hold's receipt on the ledger: the reason's digest, never the reason
    const onLedger = await receiptsAbout({ url: s.ledger.url, writer: WRITER }, orgId, (r) =>
      r.some((x) => x.receipt.type === 'data.retention.hold' && x.receipt.data.hold_id === orgHold.id),
    )
    const holdReceipt = onLedger.find((x) => x.receipt.data.hold_id === orgHold.id)!
    assert.deepEqual(holdReceipt.receipt.data, {
      record: 'organization',
      hold: 'placed',
      hold_id: orgHold.id,
      org_id: orgId,
      engagement_id: null,
      placed_by: 'owner',
      reason_digest: sha256('Litigation about Jane Doe'),
    })
    assert.ok(!JSON.stringify(onLedger).includes('Jane Doe'))

    // a file's DELETE refuses under the hold
    const refused = await s.call(s.alice, 'DELETE', `/api/files/${fileId}`)
    assert.deepEqual([refused.status, codeOf(refused)], [409, 'legal_hold'])

    // three days later, several runs: nothing goes while the organization is held
    skew = 3 * DAY_MS
    await new Promise((r) => setTimeout(r, 3500))
    assert.notEqual(await output(taskId), null)
    assert.equal(await fileStatus(fileId), 200)
    assert.equal((await outboxOf('data.retention.deleted')).length, 0)

    assert.equal((await release(s.alice, orgHold.id, { reason: 'settled' })).status, 200)
    const [deleted] = await receiptsAbout({ url: s.ledger.url, writer: WRITER }, orgId, (r) =>
      r.some((x) => x.receipt.type === 'data.retention.deleted'),
    ).then((r) => r.filter((x) => x.receipt.type === 'data.retention.deleted'))
    const data = (deleted as LedgerReceipt).receipt.data as {
      tasks: { count: number; ids_sha256: string }
      files: { count: number; ids_sha256: string }
      events: { count: number; ids_sha256: string }
      held_engagements: number
      policy: Record<string, number>
    }
    // every task of the organization ended before the cutoff but the held engagement's
    const cleared = await s.db
      .selectFrom('tasks')
      .select('id')
      .where('org_id', '=', orgId)
      .where('output_removed_at', 'is not', null)
      .execute()
    assert.ok(cleared.some((t) => t.id === taskId))
    assert.ok(!cleared.some((t) => t.id === heldTask))
    assert.equal(data.tasks.count, cleared.length)
    assert.equal(
      data.tasks.ids_sha256,
      sha256(
        cleared
          .map((t) => t.id)
          .sort()
          .join('\n'),
      ),
    )
    assert.deepEqual([data.files.count, data.files.ids_sha256], [1, sha256(fileId)])
    assert.ok(data.events.count > 0)
    assert.equal(data.held_engagements, 1)
    assert.deepEqual(data.policy, { tasks_s: 86_400, files_s: 86_400, events_s: 86_400 })
    // the receipt was written with the deletion: the outbox row and the receipt's data agree
    assert.equal((await outboxOf('data.retention.deleted')).length, 1)

    assert.equal(await output(taskId), null)
    assert.equal(await fileStatus(fileId), 404)
    assert.notEqual(await output(heldTask), null)
    assert.equal(await fileStatus(heldFile), 200)
    const events = await s.db
      .selectFrom('rental_events')
      .select(['type', 'subjects'])
      .where('org_id', '=', orgId)
      .execute()
    const about = (id: string) => events.filter((e) => (e.subjects as Record<string, string>).task_id === id)
    assert.equal(about(taskId).length, 0, 'the expired task’s events are deleted')
    assert.ok(about(heldTask).length > 0, 'the held engagement’s events are kept')
    assert.ok(events.some((e) => e.type === 'retention.deleted'))
    // receipts and money rows are kept
    assert.notEqual((await s.call(s.alice, 'GET', `/api/tasks/${taskId}`)).body.receipt, null)

    // the engagement's hold released: its data goes at the next run
    assert.equal((await release(s.alice, engagementHold.id)).status, 200)
    await eventually(
      'the held engagement’s expired data is deleted',
      async () => (await output(heldTask)) === null,
    )
    assert.equal(await fileStatus(heldFile), 404)
    await eventually(
      'a second data.retention.deleted receipt',
      async () => (await outboxOf('data.retention.deleted')).length === 2,
    )
  })

  it('answers errors in Arabic to an Arabic member or request, the English message kept as detail', async () => {
    const english = await s.call(s.alice, 'POST', '/api/retention', { tasks: 'P1Y' })
    assert.match((english.body.error as { message: string }).message, /ISO 8601/)
    // Accept-Language, while the member has chosen none
    const asked = await s.call(
      s.alice,
      'POST',
      '/api/retention',
      { tasks: 'P1Y' },
      { headers: { 'accept-language': 'ar, en;q=0.5' } },
    )
    const error = asked.body.error as { code: string; message: string; detail: string }
    assert.deepEqual([asked.status, error.code], [400, 'invalid_retention'])
    assert.match(error.message, /^مدة الاحتفاظ/)
    assert.match(error.detail, /ISO 8601/)
    // the member's chosen language, whatever Accept-Language says: a 404, a 403 and a validation 400
    assert.equal((await s.call(member, 'POST', '/api/locale', { locale: 'ar' })).status, 200)
    const en = { headers: { 'accept-language': 'en' } }
    const refused = await s.call(member, 'GET', '/api/retention', undefined, en)
    assert.deepEqual([refused.status, (refused.body.error as { code: string }).code], [403, 'forbidden'])
    assert.match((refused.body.error as { message: string }).message, /صلاحية/)
    assert.match((refused.body.error as { detail: string }).detail, /retention:read/)
    const missing = await s.call(member, 'GET', '/api/tasks/task_nope', undefined, en)
    assert.equal(missing.status, 404)
    assert.match((missing.body.error as { message: string }).message, /لا توجد مهمة/)
    const bad = await s.call(member, 'POST', '/api/tasks', { text: 1 }, en)
    assert.deepEqual([bad.status, (bad.body.error as { code: string }).code], [400, 'invalid_request'])
    assert.match((bad.body.error as { message: string }).message, /غير صالح/)
    // an English member with an Arabic Accept-Language: its choice wins
    assert.equal((await s.call(admin, 'POST', '/api/locale', { locale: 'en' })).status, 200)
    const chosen = await s.call(
      admin,
      'POST',
      '/api/retention',
      { tasks: 'P1Y' },
      { headers: { 'accept-language': 'ar' } },
    )
    assert.match((chosen.body.error as { message: string }).message, /ISO 8601/)
    assert.equal((chosen.body.error as { detail?: string }).detail, undefined)
  })
})

describe('rental legal holds stop the purge of outputs past RENTAL_OUTPUT_TTL_S too', () => {
  let s: FullStack
  let skew = 0
  before(async () => {
    s = await startFullStack(
      { RENTAL_OUTPUT_TTL_S: '3600', RENTAL_SESSION_TTL_HOURS: '720' },
      { now: () => new Date(Date.now() + skew) },
    )
  })
  after(async () => s?.close())

  it('keeps a held engagement’s output past its time, and purges it once the hold is released', async () => {
    const agentDid = await s.agentOf('job_summary')
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const free = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const run = async (engagement: string) =>
      (
        (
          await s.call(s.alice, 'POST', '/api/tasks', {
            engagement_id: engagement,
            text: 'Each receipt is a leaf.',
          })
        ).body.task as { id: string }
      ).id
    const heldTask = await run(engagementId)
    const freeTask = await run(free)
    const placed = await s.call(s.alice, 'POST', '/api/retention/hold', {
      reason: 'Keep it',
      engagement_id: engagementId,
    })
    assert.equal(placed.status, 201, placed.text)
    skew = 2 * 3600 * 1000
    const task = async (id: string) => (await s.call(s.alice, 'GET', `/api/tasks/${id}`)).body
    assert.notEqual((await task(heldTask)).output, null, 'the held engagement’s output is kept past its time')
    assert.equal((await task(freeTask)).output, null, 'another engagement’s output goes at its time')
    const released = await s.call(
      s.alice,
      'POST',
      `/api/retention/hold/${(placed.body as { id: string }).id}/release`,
      {},
    )
    assert.equal(released.status, 200, released.text)
    assert.equal((await task(heldTask)).output, null)
  })
})
