import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { tempFolder, testEnv } from '@svc/kit/testing'
import { sql } from 'kysely'
import type { RentalConfig } from '../../src/config.ts'
import { type Answer, type FullStack, startFullStack, withClock } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
const code = (res: Answer) => (res.body.error as { code?: string } | undefined)?.code
const MINUTE = 60_000

describe('capacity: an engagement’s concurrent tasks and tasks a minute, enforced on every path', () => {
  let stack: FullStack
  let did = ''
  // the rental's clock runs with the real one, shifted to the start of a minute (the per-minute window)
  let offset = 0
  const now = () => new Date(Date.now() + offset)
  let second: RunningService<RentalConfig> | undefined
  const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL)
  const hire = () => stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
  const setCapacity = async (id: string, body: unknown) => {
    const res = await stack.call(stack.alice, 'POST', `/api/engagements/${id}/capacity`, body)
    assert.equal(res.status, 200, res.text)
    return res.body
  }
  /** Every task of the engagement waits for a member's approval: it stays unfinished. */
  const holdAll = async (id: string) => {
    const res = await stack.call(stack.alice, 'POST', `/api/engagements/${id}/config`, {
      approval: { mode: 'always' },
    })
    assert.equal(res.status, 200, res.text)
  }
  const newTask = (engagement_id: string, text = 'The ledger records every receipt as a leaf.') =>
    stack.call(stack.alice, 'POST', '/api/tasks', { engagement_id, text, async: true })

  before(async () => {
    // with PostgreSQL and Redis, a second instance shares the first's schema and kv prefix (a
    // throwaway service's kv keys carry its own tag): the stack is started as a restartable one
    // alice is an operator (the demo user): she publishes the listing of a built-in agent
    stack = await startFullStack(
      { RENTAL_OPERATORS: 'demo@svc.local', RENTAL_SCHEDULE_CHECK_MS: '50' },
      { now, restartable: shared },
    )
    did = await stack.agentOf('job_summary')
  })
  after(async () => {
    await second?.close()
    await stack?.close()
  })

  it('shows no limits at first; sets them, with an engagement.capacity_changed event', async () => {
    const id = await hire()
    const first = await stack.call(stack.alice, 'GET', `/api/engagements/${id}/capacity`)
    assert.equal(first.status, 200, first.text)
    assert.deepEqual(
      { ...first.body, engagement_id: undefined },
      {
        engagement_id: undefined,
        max_concurrent_tasks: null,
        tasks_per_minute: null,
        listing_max_concurrency: null,
        updated_at: null,
      },
    )
    const set = await setCapacity(id, { max_concurrent_tasks: 3 })
    assert.equal(set.max_concurrent_tasks, 3)
    assert.equal(set.tasks_per_minute, null)
    const both = await setCapacity(id, { tasks_per_minute: 10 })
    assert.equal(both.max_concurrent_tasks, 3, 'a field not given keeps its value')
    assert.equal(both.tasks_per_minute, 10)
    const lifted = await setCapacity(id, { max_concurrent_tasks: null })
    assert.equal(lifted.max_concurrent_tasks, null)
    const { rows: mine } = await sql<{ data: { max_concurrent_tasks: number | null } }>`
      select data from rental_events where type = 'engagement.capacity_changed' and stream = ${id}
      order by seq`.execute(stack.db)
    assert.deepEqual(
      mine.map((e) => e.data.max_concurrent_tasks),
      [3, 3, null],
    )
  })

  it('refuses bad input with 400 and another organization’s engagement with 404', async () => {
    const id = await hire()
    for (const body of [
      { max_concurrent_tasks: 0 },
      { max_concurrent_tasks: 10_001 },
      { tasks_per_minute: 1.5 },
      { tasks_per_minute: '5' },
      { burst: 3 },
      {},
    ]) {
      const res = await stack.call(stack.alice, 'POST', `/api/engagements/${id}/capacity`, body)
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
    }
    const read = await stack.call(stack.bob, 'GET', `/api/engagements/${id}/capacity`)
    assert.equal(read.status, 404, read.text)
    const write = await stack.call(stack.bob, 'POST', `/api/engagements/${id}/capacity`, {
      max_concurrent_tasks: 1,
    })
    assert.equal(write.status, 404, write.text)
    assert.equal(code(write), 'engagement_not_found')
  })

  it('keeps max_concurrent_tasks within the cap of the agent’s limited listing (409 naming it)', async () => {
    // another agent than the other tests': its listing's cap does not touch their tasks
    const invoiceDid = await stack.agentOf('job_invoice_check')
    const id = await stack.hireAndSign(stack.alice, 'job_invoice_check', invoiceDid, stack.newClientKey())
    const listed = await stack.call(stack.alice, 'POST', '/api/market/listings', {
      agent_did: invoiceDid,
      title: 'Invoice checks',
      description: 'Reads invoices against the ledger.',
      price_fils: 15_000,
    })
    assert.equal(listed.status, 200, listed.text)
    const limited = await stack.call(
      stack.alice,
      'POST',
      `/api/market/listings/${(listed.body as { id: string }).id}/availability`,
      { state: 'limited', max_concurrency: 2 },
    )
    assert.equal(limited.status, 200, limited.text)
    const over = await stack.call(stack.alice, 'POST', `/api/engagements/${id}/capacity`, {
      max_concurrent_tasks: 3,
    })
    assert.deepEqual([over.status, code(over)], [409, 'capacity_over_listing'])
    assert.match((over.body.error as { message: string }).message, /limited to 2/)
    const within = await setCapacity(id, { max_concurrent_tasks: 2 })
    assert.equal(within.listing_max_concurrency, 2)
  })

  it('of twenty creations at once under max_concurrent_tasks 5, exactly five pass; the rest 429 with Retry-After', async () => {
    const id = await hire()
    await holdAll(id)
    await setCapacity(id, { max_concurrent_tasks: 5 })
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => newTask(id, `Task ${i}.`)))
    const passed = answers.filter((a) => a.status === 200)
    const refused = answers.filter((a) => a.status === 429)
    assert.equal(passed.length, 5, answers.map((a) => `${a.status} ${a.text.slice(0, 120)}`).join('\n'))
    assert.equal(refused.length, 15)
    for (const r of refused) {
      assert.equal(code(r), 'capacity_exceeded')
      assert.equal(r.headers.get('retry-after'), '5')
      assert.match((r.body.error as { message: string }).message, /max_concurrent_tasks is 5/)
    }
    // the console's A2A surface is refused the same way: JSON-RPC -32603 with ErrorInfo and RetryInfo
    const issued = await stack.call(stack.alice, 'POST', '/api/tokens', { label: 'capacity' })
    const token = (issued.body as { token: string }).token
    const res = await fetch(`${stack.rental.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: {
            messageId: 'm1',
            role: 'ROLE_USER',
            parts: [{ text: 'One more, please.' }],
            metadata: { engagement_id: id },
          },
        },
      }),
    })
    assert.equal(res.status, 200)
    const rpc = (await res.json()) as { error: { code: number; data: Array<Record<string, unknown>> } }
    assert.equal(rpc.error.code, -32603, JSON.stringify(rpc))
    assert.equal(rpc.error.data[0]!.reason, 'CAPACITY_EXCEEDED')
    assert.deepEqual(rpc.error.data[1], {
      '@type': 'type.googleapis.com/google.rpc.RetryInfo',
      retryDelay: '5s',
    })
    // lifting the limit lets the next one in
    await setCapacity(id, { max_concurrent_tasks: 6 })
    assert.equal((await newTask(id)).status, 200)
    assert.equal((await newTask(id)).status, 429)
  })

  it('counts tasks a minute: over tasks_per_minute 429 with Retry-After to the minute’s end; the next minute takes more', async () => {
    // start at the first second of a minute: the test's tasks all fall in one window
    offset = Math.ceil(Date.now() / MINUTE) * MINUTE + 1000 - Date.now()
    const id = await hire()
    await holdAll(id)
    await setCapacity(id, { tasks_per_minute: 3 })
    for (let i = 0; i < 3; i++) assert.equal((await newTask(id)).status, 200)
    const over = await newTask(id)
    assert.equal(over.status, 429, over.text)
    assert.equal(code(over), 'capacity_exceeded')
    const retryAfter = Number(over.headers.get('retry-after'))
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
    assert.match((over.body.error as { message: string }).message, /at most 3 new tasks a minute/)
    offset += MINUTE
    assert.equal((await newTask(id)).status, 200, 'a new minute, a new count')
  })

  it('a batch over the capacity keeps its items queued (not failed) until there is room', async () => {
    const id = await hire()
    await holdAll(id)
    await setCapacity(id, { max_concurrent_tasks: 1 })
    const created = await stack.call(stack.alice, 'POST', '/api/batches', {
      engagement_id: id,
      items: ['First item.', 'Second item.', 'Third item.'],
      concurrency: 3,
    })
    assert.equal(created.status, 201, created.text)
    const batchId = (created.body as { id: string }).id
    const counts = async () =>
      (await stack.call(stack.alice, 'GET', `/api/batches/${batchId}`)).body.counts as Record<string, number>
    await eventually('one item running, two queued', async () => {
      const c = await counts()
      return c.running === 1 && c.queued === 2
    })
    // a while later: still queued, none failed
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.deepEqual(await counts(), { queued: 2, running: 1, completed: 0, failed: 0, canceled: 0 })
    await setCapacity(id, { max_concurrent_tasks: null })
    await eventually('all three running', async () => (await counts()).running === 3)
  })

  it('a schedule’s tick over the capacity is a schedule.failed, and the schedule stays active', async () => {
    const id = await hire()
    await holdAll(id)
    await setCapacity(id, { max_concurrent_tasks: 1 })
    assert.equal((await newTask(id)).status, 200)
    const made = await stack.call(stack.alice, 'POST', '/api/schedules', {
      engagement_id: id,
      text: 'Summarise the day’s receipts.',
      cron: '* * * * *',
    })
    assert.equal(made.status, 200, made.text)
    const scheduleId = (made.body as { id: string }).id
    offset += MINUTE
    type Schedule = { state: string; failed_count: number; last_error: { message: string } | null }
    let schedule: Schedule | undefined
    await eventually('the tick fails', async () => {
      const read = await stack.call(stack.alice, 'GET', `/api/schedules/${scheduleId}`)
      schedule = read.body as unknown as Schedule
      return schedule.failed_count >= 1
    })
    assert.equal(schedule!.state, 'active')
    assert.match(schedule!.last_error?.message ?? '', /max_concurrent_tasks is 1/)
    const del = await stack.call(stack.alice, 'DELETE', `/api/schedules/${scheduleId}`)
    assert.ok(del.status < 300, del.text)
  })

  it(
    'capacity enforced under concurrency across two rental instances on PostgreSQL and Redis (one database, one kv)',
    {
      skip: shared ? false : 'two instances need a shared database and kv (PostgreSQL and Redis)',
    },
    async () => {
      second = await startService(
        withClock(now),
        testEnv({
          ...stack.rentalEnv,
          RENTAL_PORT: String(await freePort()),
          DATA_DIR: tempFolder(),
          RENTAL_ENCRYPTION_KEY: stack.rental.ctx.config.encryptionKey.toString('base64url'),
        }) as Record<string, string>,
      )
      assert.equal(second.ctx.kv.backend, 'redis')
      const urls = [stack.rental.url, second.url]
      const on = (i: number, engagement_id: string) =>
        fetch(`${urls[i % 2]}/api/tasks`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            cookie: stack.alice.jar.header(),
            'x-csrf-token': stack.alice.csrf,
          },
          body: JSON.stringify({ engagement_id, text: `Task ${i}.`, async: true }),
        }).then((r) => r.status)
      const concurrent = await hire()
      await holdAll(concurrent)
      await setCapacity(concurrent, { max_concurrent_tasks: 5 })
      const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => on(i, concurrent)))
      assert.deepEqual(statuses.sort(), [...Array<number>(5).fill(200), ...Array<number>(15).fill(429)])
      // a minute's count is one key in Redis: three on the two instances, the fourth refused on either
      offset = Math.ceil((Date.now() + offset) / MINUTE) * MINUTE + 1000 - Date.now()
      const rated = await hire()
      await holdAll(rated)
      await setCapacity(rated, { tasks_per_minute: 3 })
      assert.deepEqual([await on(0, rated), await on(1, rated), await on(0, rated)], [200, 200, 200])
      assert.deepEqual([await on(1, rated), await on(0, rated)], [429, 429])
    },
  )
})
