import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'

const errorOf = (body: Record<string, unknown>) => body.error as { code: string; message: string }

describe('rental: an engagement’s config (GET/POST /api/engagements/{id}/config)', () => {
  let stack: FullStack
  let owner: Client
  let engagementId = ''
  let price = 0
  const path = () => `/api/engagements/${engagementId}/config`
  before(async () => {
    stack = await startFullStack()
    owner = stack.alice
    engagementId = await stack.hireAndSign(
      owner,
      'job_summary',
      await stack.agentOf('job_summary'),
      stack.newClientKey(),
    )
    const engagement = await stack.call(owner, 'GET', `/api/engagements/${engagementId}`)
    price = (engagement.body.engagement as { price_fils: number }).price_fils
  })
  after(async () => stack.close())

  it('answers the defaults at version 0: no approval, the job’s price as the maximum, all webhook events, English', async () => {
    const got = await stack.call(owner, 'GET', path())
    assert.equal(got.status, 200, got.text)
    assert.ok(price > 0)
    assert.deepEqual(got.body, {
      approval: { mode: 'never' },
      max_task_price_fils: price,
      output_ttl_s: got.body.output_ttl_s,
      webhook_events: ['*'],
      default_language: 'en',
      engagement_id: engagementId,
      version: 0,
      updated_at: null,
    })
    assert.ok(Number.isInteger(got.body.output_ttl_s) && (got.body.output_ttl_s as number) > 0)
    assert.equal(got.headers.get('etag'), '"0"')
  })

  it('a change is a new version, kept with what changed and who changed it; the task’s output is kept for output_ttl_s', async () => {
    const changed = await stack.call(owner, 'POST', path(), {
      approval: { mode: 'above_price', above_fils: 10_000 },
      output_ttl_s: 120,
      default_language: 'ar',
      webhook_events: ['task.completed', 'task.completed'],
    })
    assert.equal(changed.status, 200, changed.text)
    assert.equal(changed.body.version, 1)
    assert.deepEqual(changed.body.approval, { mode: 'above_price', above_fils: 10_000 })
    assert.equal(changed.body.default_language, 'ar')
    assert.deepEqual(changed.body.webhook_events, ['task.completed'])
    assert.equal(changed.body.max_task_price_fils, price)
    assert.equal(typeof changed.body.updated_at, 'string')
    const got = await stack.call(owner, 'GET', path())
    assert.deepEqual(got.body, changed.body)
    const rows = await stack.db
      .selectFrom('engagement_config_versions')
      .selectAll()
      .where('engagement_id', '=', engagementId)
      .execute()
    assert.equal(rows.length, 1)
    assert.equal(rows[0]!.actor, owner.me.client.subject)
    assert.deepEqual(rows[0]!.changes, {
      approval: { mode: 'above_price', above_fils: 10_000 },
      output_ttl_s: 120,
      default_language: 'ar',
      webhook_events: ['task.completed'],
    })
    const task = await stack.call(owner, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'One line.',
    })
    assert.equal(task.status, 200, task.text)
    const view = task.body.task as { state: string; completed_at: string; output_expires_at: string }
    assert.equal(view.state, 'completed')
    assert.equal(Date.parse(view.output_expires_at) - Date.parse(view.completed_at), 120_000)
  })

  it('refuses unknown keys, numbers out of bounds and an above_fils that does not fit the mode (400), changing nothing', async () => {
    const bad: Array<[unknown, string]> = [
      [{ colour: 'blue' }, 'invalid_request'],
      [{ approval: { mode: 'never', extra: 1 } }, 'invalid_request'],
      [{ output_ttl_s: 0 }, 'invalid_request'],
      [{ output_ttl_s: 1e12 }, 'invalid_request'],
      [{ max_task_price_fils: -1 }, 'invalid_request'],
      [{ max_task_price_fils: 1.5 }, 'invalid_request'],
      [{ webhook_events: ['Not An Event'] }, 'invalid_request'],
      [{ default_language: 'fr' }, 'invalid_request'],
      [{ approval: { mode: 'above_price' } }, 'invalid_config'],
      [{ approval: { mode: 'always', above_fils: 5 } }, 'invalid_config'],
      [{}, 'nothing_to_change'],
    ]
    for (const [body, code] of bad) {
      const answer = await stack.call(owner, 'POST', path(), body)
      assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`)
      assert.equal(errorOf(answer.body).code, code, JSON.stringify(body))
    }
    assert.equal((await stack.call(owner, 'GET', path())).body.version, 1)
  })

  it('If-Match names the version changed: another one is 412, the current one passes', async () => {
    const stale = await stack.call(
      owner,
      'POST',
      path(),
      { output_ttl_s: 60 },
      { headers: { 'if-match': '"0"' } },
    )
    assert.equal(stale.status, 412, stale.text)
    assert.equal(errorOf(stale.body).code, 'precondition_failed')
    const malformed = await stack.call(
      owner,
      'POST',
      path(),
      { output_ttl_s: 60 },
      { headers: { 'if-match': 'one' } },
    )
    assert.equal(malformed.status, 400, malformed.text)
    const fresh = await stack.call(
      owner,
      'POST',
      path(),
      { output_ttl_s: 60 },
      { headers: { 'if-match': '"1"' } },
    )
    assert.equal(fresh.status, 200, fresh.text)
    assert.equal(fresh.body.version, 2)
    assert.equal(fresh.headers.get('etag'), '"2"')
  })

  it('another organization’s engagement is 404 on both routes; a viewer reads it and is refused a change (403)', async () => {
    for (const method of ['GET', 'POST'])
      assert.equal(
        (await stack.call(stack.bob, method, path(), method === 'POST' ? { output_ttl_s: 10 } : undefined))
          .status,
        404,
      )
    const invited = await stack.call(owner, 'POST', '/api/org/members', {
      email: 'viewer@config.example',
      role: 'viewer',
    })
    assert.equal(invited.status, 201, invited.text)
    const viewer = await stack.signInWith('viewer@config.example')
    assert.equal((await stack.call(viewer, 'GET', path())).status, 200)
    const refused = await stack.call(viewer, 'POST', path(), { output_ttl_s: 10 })
    assert.equal(refused.status, 403, refused.text)
    assert.match(errorOf(refused.body).message, /engagements:write/)
    assert.equal((await stack.call(owner, 'GET', path())).body.version, 2)
  })

  it('a task priced above max_task_price_fils is refused (409 task_price_over_limit); lifting the limit lets it through', async () => {
    const capped = await stack.call(owner, 'POST', path(), { max_task_price_fils: price - 1 })
    assert.equal(capped.status, 200, capped.text)
    const refused = await stack.call(owner, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'One line.',
    })
    assert.equal(refused.status, 409, refused.text)
    assert.equal(errorOf(refused.body).code, 'task_price_over_limit')
    const lifted = await stack.call(owner, 'POST', path(), { max_task_price_fils: null })
    assert.equal(lifted.status, 200, lifted.text)
    const task = await stack.call(owner, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'One line.',
    })
    assert.equal(task.status, 200, task.text)
  })
})
