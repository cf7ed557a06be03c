import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { tempFolder, testEnv } from '@svc/kit/testing'
import { sql } from 'kysely'
import type { RentalConfig } from '../../src/config.ts'
import { type Client, type FullStack, startFullStack, withClock } from '../support/full-stack.ts'
import { ADMIN, eventually } from '../support/stack.ts'

interface Schedule {
  id: string
  name: string | null
  engagement_id: string
  cron: string
  timezone: string
  state: 'active' | 'paused'
  paused_reason: string | null
  next_runs: string[]
  fired_count: number
  failed_count: number
  missed_count: number
  last_tick_at: string | null
  last_task_id: string | null
  last_error: { message: string; at: string } | null
  catch_up: { tick_at: string; missed: number; caught_up_at: string } | null
}

const errorOf = (body: Record<string, unknown>) => body.error as { code: string; message: string }
const MINUTE = 60_000

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

describe('rental: schedules', () => {
  // the rental's clock stands still unless a test moves it: half a minute past a minute, so that
  // moving it one minute crosses exactly one tick of `* * * * *`
  let clockMs = Math.floor(Date.now() / MINUTE) * MINUTE + 30_000
  const now = () => new Date(clockMs)
  let stack: FullStack
  let engagement = ''
  let agentDid = ''
  let second: RunningService<RentalConfig> | undefined

  before(async () => {
    stack = await startFullStack({ RENTAL_SCHEDULE_CHECK_MS: '50' }, { now })
    agentDid = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', agentDid, stack.newClientKey())
  })
  after(async () => {
    await second?.close()
    await stack.close()
  })

  const create = async (body: Record<string, unknown>, who: Client = stack.alice) =>
    stack.call(who, 'POST', '/api/schedules', {
      engagement_id: engagement,
      text: 'Summarise the day’s receipts.',
      ...body,
    })
  const made = async (body: Record<string, unknown>) => {
    const res = await create(body)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as Schedule
  }
  const get = async (id: string) => {
    const res = await stack.call(stack.alice, 'GET', `/api/schedules/${id}`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as Schedule
  }
  /** Waits until the schedule has fired `n` ticks in all. */
  const fired = (id: string, n: number) =>
    eventually(`${id} fires ${n}`, async () => (await get(id)).fired_count >= n)
  /**
   * Moves the clock a minute at a time until `witness` (an every-minute schedule) fired twice more:
   * a whole check of the scheduler went by after the clock moved (checks do not overlap).
   */
  const checkWentBy = async (witness: string) => {
    for (let i = 0; i < 2; i++) {
      const n = (await get(witness)).fired_count
      clockMs += MINUTE
      await fired(witness, n + 1)
    }
  }
  /** The tasks a schedule made (their `task.created` events, by the schedule) and the ticks it fired. */
  const madeBy = async (id: string) => {
    const tasks = await sql<{ task_id: string }>`
      select subjects->>'task_id' as task_id from rental_events
      where type = 'task.created' and actor_type = 'schedule' and actor_id = ${id}`.execute(stack.db)
    const fired = await sql<{ tick_at: string; task_id: string }>`
      select data->>'tick_at' as tick_at, data->>'task_id' as task_id from rental_events
      where type = 'schedule.fired' and subjects->>'schedule_id' = ${id}`.execute(stack.db)
    return { tasks: tasks.rows.map((r) => r.task_id), fired: fired.rows }
  }

  it('refuses a bad expression or zone with 400 naming it, and a body that is not a schedule', async () => {
    for (const cron of ['* * * * * *', '0 * * * * * *', '* * * *', '@hourly', '61 * * * *', '0 0 30 2 *']) {
      const res = await create({ cron })
      assert.equal(res.status, 400, `${cron}: ${res.text}`)
      assert.equal(errorOf(res.body).code, 'invalid_cron', cron)
      assert.ok(errorOf(res.body).message.includes(JSON.stringify(cron)), errorOf(res.body).message)
    }
    for (const timezone of ['Mars/Olympus_Mons', '+04:00', 'UTC; drop table', 'Europe/']) {
      const res = await create({ cron: '0 9 * * *', timezone })
      assert.equal(res.status, 400, `${timezone}: ${res.text}`)
      assert.equal(errorOf(res.body).code, 'invalid_timezone', timezone)
      assert.ok(errorOf(res.body).message.includes(JSON.stringify(timezone)))
    }
    for (const [body, field] of [
      [{ cron: '* '.repeat(60) }, 'cron'],
      [{ cron: '0 9 * * *', text: '' }, 'text'],
      [{ cron: '0 9 * * *', text: 'x'.repeat(20_001) }, 'text'],
      [{ cron: '0 9 * * *', every: 'day' }, 'every'],
    ] as const) {
      const res = await create(body)
      assert.equal(res.status, 400, res.text)
      assert.match(errorOf(res.body).message, new RegExp(field), res.text)
    }
    // the engagement must be the organization's: bob's answer is the one of a missing engagement
    const bobs = await create({ cron: '0 9 * * *' }, stack.bob)
    assert.equal(bobs.status, 404, bobs.text)
    assert.equal(errorOf(bobs.body).code, 'engagement_not_found')
  })

  it('creates a schedule showing its next runs in UTC for its zone', async () => {
    const schedule = await made({ cron: '30  9 * * 1-5', timezone: 'Asia/Dubai', name: 'weekday mornings' })
    assert.equal(schedule.state, 'active')
    assert.equal(schedule.cron, '30 9 * * 1-5')
    assert.equal(schedule.timezone, 'Asia/Dubai')
    assert.equal(schedule.name, 'weekday mornings')
    assert.equal(schedule.next_runs.length, 5)
    let previous = clockMs
    for (const run of schedule.next_runs) {
      const at = new Date(run)
      // 09:30 in Dubai (UTC+4, no daylight saving) is 05:30 UTC, Monday to Friday there
      assert.equal(run, `${run.slice(0, 10)}T05:30:00.000Z`)
      assert.ok(at.getUTCDay() >= 1 && at.getUTCDay() <= 5, run)
      assert.ok(at.getTime() > previous, 'in order, after now')
      previous = at.getTime()
    }
    assert.deepEqual(await get(schedule.id), schedule)
    const list = await stack.call(stack.alice, 'GET', '/api/schedules?limit=100')
    assert.equal(list.status, 200, list.text)
    assert.ok((list.body.schedules as Schedule[]).some((s) => s.id === schedule.id))
    // UTC when no zone is given
    assert.equal((await made({ cron: '0 0 1 * *' })).timezone, 'UTC')
  })

  it('makes one task per tick; pausing stops ticks, resuming computes the next from now', async () => {
    const witness = await made({ cron: '* * * * *', name: 'witness' })
    const schedule = await made({ cron: '* * * * *' })
    clockMs += MINUTE
    await fired(schedule.id, 1)
    let seen = await get(schedule.id)
    assert.equal(seen.fired_count, 1)
    assert.equal(seen.catch_up, null)
    const task = await stack.call(stack.alice, 'GET', `/api/tasks/${seen.last_task_id}`)
    assert.equal(task.status, 200, task.text)
    assert.equal(task.body.engagement_id, engagement)

    const paused = await stack.call(stack.alice, 'POST', `/api/schedules/${schedule.id}/pause`)
    assert.equal(paused.status, 200, paused.text)
    assert.equal(paused.body.state, 'paused')
    assert.deepEqual(paused.body.next_runs, [])
    const again = await stack.call(stack.alice, 'POST', `/api/schedules/${schedule.id}/pause`)
    assert.equal(again.status, 409, again.text)
    assert.equal(errorOf(again.body).code, 'schedule_not_active')
    assert.match(errorOf(again.body).message, /paused/)
    clockMs += 3 * MINUTE
    await checkWentBy(witness.id)
    assert.equal((await get(schedule.id)).fired_count, 1, 'no tick while paused')

    const resumed = await stack.call(stack.alice, 'POST', `/api/schedules/${schedule.id}/resume`)
    assert.equal(resumed.status, 200, resumed.text)
    seen = resumed.body as unknown as Schedule
    assert.equal(seen.state, 'active')
    // the next tick is the first after now: the three minutes paused over are not run
    assert.ok(new Date(seen.next_runs[0]!).getTime() > clockMs)
    assert.ok(new Date(seen.next_runs[0]!).getTime() <= clockMs + MINUTE)
    const twice = await stack.call(stack.alice, 'POST', `/api/schedules/${schedule.id}/resume`)
    assert.equal(twice.status, 409, twice.text)
    assert.equal(errorOf(twice.body).code, 'schedule_not_paused')
    assert.match(errorOf(twice.body).message, /active/)
    clockMs += MINUTE
    await fired(schedule.id, 2)
    seen = await get(schedule.id)
    assert.equal(seen.fired_count, 2)
    assert.equal(seen.missed_count, 0)
    const both = await madeBy(schedule.id)
    assert.equal(both.tasks.length, 2)
    assert.deepEqual(both.fired.map((f) => f.task_id).sort(), [...both.tasks].sort())

    // deleted: no more ticks, and not found
    const deleted = await stack.call(stack.alice, 'DELETE', `/api/schedules/${schedule.id}`)
    assert.equal(deleted.status, 200, deleted.text)
    assert.deepEqual(deleted.body, { id: schedule.id, deleted: true })
    for (const [method, path] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/pause'],
      ['POST', '/resume'],
    ] as const) {
      const res = await stack.call(stack.alice, method, `/api/schedules/${schedule.id}${path}`)
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`)
      assert.equal(errorOf(res.body).code, 'schedule_not_found')
    }
    await checkWentBy(witness.id)
    assert.equal((await madeBy(schedule.id)).tasks.length, 2, 'no tick once deleted')
    await stack.call(stack.alice, 'DELETE', `/api/schedules/${witness.id}`)
  })

  it('a rental that missed ticks runs one catch-up, said in the schedule’s record', async () => {
    const schedule = await made({ cron: '* * * * *' })
    // ten minutes go by without a check (as for a rental that was down)
    clockMs += 10 * MINUTE
    await fired(schedule.id, 1)
    const seen = await get(schedule.id)
    assert.equal(seen.fired_count, 1)
    assert.equal(seen.missed_count, 9)
    assert.equal(seen.catch_up?.missed, 9)
    assert.equal(seen.catch_up?.caught_up_at, new Date(clockMs).toISOString())
    assert.ok(new Date(seen.next_runs[0]!).getTime() > clockMs)
    assert.equal((await madeBy(schedule.id)).tasks.length, 1)
    await stack.call(stack.alice, 'DELETE', `/api/schedules/${schedule.id}`)
  })

  it('another organization’s schedule is not found, and its list is its own', async () => {
    const schedule = await made({ cron: '0 12 * * *' })
    for (const [method, path] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/pause'],
      ['POST', '/resume'],
    ] as const) {
      const res = await stack.call(stack.bob, method, `/api/schedules/${schedule.id}${path}`)
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`)
      assert.equal(errorOf(res.body).code, 'schedule_not_found')
    }
    const list = await stack.call(stack.bob, 'GET', '/api/schedules')
    assert.equal(list.status, 200, list.text)
    assert.deepEqual(list.body.schedules, [])
    assert.equal((await get(schedule.id)).state, 'active')
  })

  it('a viewer reads schedules but changes none; billing neither reads nor changes them', async () => {
    const schedule = await made({ cron: '0 12 * * *' })
    for (const role of ['viewer', 'billing']) {
      const invited = await stack.call(stack.alice, 'POST', '/api/org/members', {
        email: `${role}@schedules.test`,
        role,
      })
      assert.equal(invited.status, 201, invited.text)
    }
    const viewer = await stack.signInWith('viewer@schedules.test')
    const billing = await stack.signInWith('billing@schedules.test')
    assert.equal((await stack.call(viewer, 'GET', '/api/schedules')).status, 200)
    assert.equal((await stack.call(viewer, 'GET', `/api/schedules/${schedule.id}`)).status, 200)
    for (const [who, method, path, permission] of [
      [viewer, 'POST', '/api/schedules', 'schedules:write'],
      [viewer, 'POST', `/api/schedules/${schedule.id}/pause`, 'schedules:write'],
      [viewer, 'DELETE', `/api/schedules/${schedule.id}`, 'schedules:write'],
      [billing, 'GET', '/api/schedules', 'schedules:read'],
      [billing, 'GET', `/api/schedules/${schedule.id}`, 'schedules:read'],
      [billing, 'POST', `/api/schedules/${schedule.id}/resume`, 'schedules:write'],
    ] as const) {
      const res = await stack.call(who, method, path, method === 'POST' ? { cron: '* * * * *' } : undefined)
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`)
      assert.equal(errorOf(res.body).code, 'forbidden')
      assert.match(errorOf(res.body).message, new RegExp(permission))
    }
    assert.equal((await get(schedule.id)).state, 'active')
  })

  it(
    'makes one task per tick with two rental instances on one PostgreSQL database',
    {
      skip: process.env.DATABASE_URL
        ? false
        : 'PGlite is one process’s database: a second instance cannot share it',
    },
    async () => {
      second = await startService(
        withClock(now),
        testEnv({
          IDP_URL: stack.idp.url,
          LEDGER_URL: stack.ledger.url,
          AGENTS_URL: stack.agents.url,
          RENTAL_IDP_ADMIN_TOKEN: ADMIN,
          RENTAL_PORT: String(await freePort()),
          DATA_DIR: tempFolder(),
          DATABASE_SCHEMA: stack.rental.ctx.database!.schema,
          RENTAL_ENCRYPTION_KEY: stack.rental.ctx.config.encryptionKey.toString('base64url'),
          RENTAL_SCHEDULE_CHECK_MS: '50',
        }),
      )
      const schedules = [await made({ cron: '* * * * *' }), await made({ cron: '* * * * *' })]
      for (let tick = 1; tick <= 5; tick++) {
        clockMs += MINUTE
        for (const s of schedules) await fired(s.id, tick)
      }
      for (const s of schedules) {
        const made = await madeBy(s.id)
        assert.equal(made.tasks.length, 5, `one task per tick: ${JSON.stringify(made.fired)}`)
        assert.equal(made.fired.length, 5)
        assert.equal(new Set(made.fired.map((f) => f.tick_at)).size, 5)
        assert.equal((await get(s.id)).fired_count, 5)
      }
    },
  )

  it('pauses a schedule whose task cannot be made, with the reason and a schedule.failed event', async () => {
    const schedule = await made({ cron: '* * * * *' })
    // the kill switch: the agent takes no new task (last: the engagement serves nothing after it)
    const revoked = await stack.call(stack.alice, 'POST', `/api/agents/${agentDid}/revoke`, {
      reason: 'schedules test',
    })
    assert.equal(revoked.status, 200, revoked.text)
    clockMs += MINUTE
    await eventually('the schedule is paused', async () => (await get(schedule.id)).state === 'paused')
    const seen = await get(schedule.id)
    assert.equal(seen.fired_count, 0)
    assert.equal(seen.failed_count, 1)
    assert.match(seen.paused_reason ?? '', /revoked/)
    assert.match(seen.last_error?.message ?? '', /revoked/)
    const events = await sql<{ n: number }>`
      select count(*)::int as n from rental_events
      where type = 'schedule.failed' and subjects->>'schedule_id' = ${schedule.id}`.execute(stack.db)
    assert.equal(events.rows[0]!.n, 1)
  })

  it('holds at most 100 schedules per organization: of two creations for the last place, one is made', async () => {
    const total = async () =>
      (await stack.call(stack.alice, 'GET', '/api/schedules?limit=1')).body.total as number
    for (let n = await total(); n < 99; n++) await made({ cron: '0 12 * * *' })
    const both = await Promise.all([create({ cron: '0 12 * * *' }), create({ cron: '0 13 * * *' })])
    assert.deepEqual(both.map((r) => r.status).sort(), [200, 409], both.map((r) => r.text).join(' '))
    const refused = both.find((r) => r.status === 409)!
    assert.equal(errorOf(refused.body).code, 'schedule_limit')
    assert.equal(await total(), 100)
  })
})
