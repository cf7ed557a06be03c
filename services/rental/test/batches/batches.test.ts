import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { agentInputHash } from '@svc/trust/agent-result'
import { parse } from 'csv-parse/sync'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { csvField } from '@svc/kit'
import { launchRental, rentalReady } from '../support/rental-process.ts'
import { eventually } from '../support/stack.ts'

interface BatchAnswer {
  id: string
  state: string
  total: number
  concurrency: number
  counts: Record<'queued' | 'running' | 'completed' | 'failed' | 'canceled', number>
  started_at: string | null
  finished_at: string | null
}
interface Row {
  index: number
  state: string
  task_id: string | null
  output: { text: string | null; data: unknown } | null
  output_expired: boolean
  receipt_leaf_hash: string | null
  error: string | null
}

describe('batches: many tasks under one engagement, across a kill -9', () => {
  let stack: FullStack
  let engagement: string
  const children: ChildProcess[] = []

  before(async () => {
    stack = await startFullStack(
      // the killed process's taken task run is retried once its lease (5 s + 10 s) is found expired
      { RENTAL_TASK_TIMEOUT_MS: '5000', JOBS_MAINTENANCE_S: '1' },
      { restartable: true },
    )
    const did = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
  })
  after(async () => {
    for (const child of children) child.kill('SIGKILL')
    await stack.close()
  })

  const create = (body: unknown, headers: Record<string, string> = {}) =>
    stack.call(stack.alice, 'POST', '/api/batches', body, { headers })
  const batch = async (id: string) => {
    const res = await stack.call(stack.alice, 'GET', `/api/batches/${id}`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as BatchAnswer
  }
  const text = (i: number) => `Item ${i} of the batch. The ledger records every receipt as a leaf.`

  it('refuses bad input with 400 naming the field or the limit', async () => {
    const none = await create({ engagement_id: engagement, items: [] })
    assert.equal(none.status, 400, none.text)
    assert.match(none.text, /items/)
    const many = await create({
      engagement_id: engagement,
      items: Array.from({ length: 1001 }, (_, i) => text(i)),
    })
    assert.equal(many.status, 400, many.text)
    assert.match(many.text, /1000/)
    const long = await create({ engagement_id: engagement, items: ['x'.repeat(20_001)] })
    assert.equal(long.status, 400, long.text)
    for (const body of [
      { engagement_id: engagement, items: ['a'], concurrency: 21 },
      { engagement_id: engagement, items: ['a'], concurrency: 0 },
      { engagement_id: engagement, items: [{ text: 'a', extra: 1 }] },
      { engagement_id: engagement, items: ['a'], color: 'red' },
      { engagement_id: engagement, items: [''] },
    ]) {
      const res = await create(body)
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
    }
    // the route takes a full batch (1000 texts of the longest length), not an unbounded body
    const huge = await create({ engagement_id: engagement, items: ['x'.repeat(25 * 1024 * 1024)] })
    assert.equal(huge.status, 413, huge.text.slice(0, 200))
    const unknown = await create({ engagement_id: 'eng_nope', items: ['a'] })
    assert.equal(unknown.status, 404, unknown.text)
  })

  it('creates idempotently, hides a batch from another organization, and refuses an unknown format', async () => {
    const body = { engagement_id: engagement, items: [text(1), { text: text(2) }], name: 'two' }
    const first = await create(body, { 'idempotency-key': 'batch-two' })
    assert.equal(first.status, 201, first.text)
    const again = await create(body, { 'idempotency-key': 'batch-two' })
    assert.equal(again.status, 201, again.text)
    assert.equal(again.body.id, first.body.id)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    const reused = await create({ ...body, name: 'other' }, { 'idempotency-key': 'batch-two' })
    assert.equal(reused.status, 422, reused.text)
    const id = first.body.id as string
    await eventually('the small batch completes', async () => (await batch(id)).state === 'completed')
    const done = await batch(id)
    assert.deepEqual(done.counts, { queued: 0, running: 0, completed: 2, failed: 0, canceled: 0 })
    assert.ok(done.started_at && done.finished_at)
    const listed = await stack.call(stack.alice, 'GET', '/api/batches?limit=10')
    assert.equal(listed.status, 200, listed.text)
    assert.ok((listed.body.batches as BatchAnswer[]).some((b) => b.id === id))
    for (const path of [
      `/api/batches/${id}`,
      `/api/batches/${id}/export`,
      `/api/batches/${id}/export?format=csv`,
    ]) {
      const other = await stack.call(stack.bob, 'GET', path)
      assert.equal(other.status, 404, `${path}: ${other.text}`)
    }
    assert.equal(((await stack.call(stack.bob, 'GET', '/api/batches')).body.batches as unknown[]).length, 0)
    const mine = await stack.call(stack.bob, 'POST', '/api/batches', {
      engagement_id: engagement,
      items: ['a'],
    })
    assert.equal(mine.status, 404, mine.text)
    const bad = await stack.call(stack.alice, 'GET', `/api/batches/${id}/export?format=xlsx`)
    assert.equal(bad.status, 400, bad.text)
    assert.match(bad.text, /format/)
    assert.equal(csvField('=HYPERLINK("http://x")'), '"\'=HYPERLINK(""http://x"")"')
    assert.equal(csvField('-1, or +2'), '"\'-1, or +2"')
    assert.equal(csvField('plain'), 'plain')
    assert.equal(csvField('two\nlines'), '"two\nlines"')
  })

  it('needs an active engagement, and fails the items whose task the rules refuse', async () => {
    // bob's own organization: his revocation leaves alice's engagement alone
    const did = await stack.agentOf('job_summary')
    const pending = await stack.call(stack.bob, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: did,
    })
    assert.equal(pending.status, 200, pending.text)
    const notActive = await stack.call(stack.bob, 'POST', '/api/batches', {
      engagement_id: (pending.body.engagement as { id: string }).id,
      items: ['a'],
    })
    assert.equal(notActive.status, 409, notActive.text)
    assert.match(notActive.text, /pending/)
    const active = await stack.hireAndSign(stack.bob, 'job_summary', did, stack.newClientKey())
    const revoked = await stack.call(stack.bob, 'POST', `/api/agents/${did}/revoke`, { reason: 'test' })
    assert.equal(revoked.status, 200, revoked.text)
    const made = await stack.call(stack.bob, 'POST', '/api/batches', {
      engagement_id: active,
      items: [text(1), text(2), text(3)],
      concurrency: 1,
    })
    assert.equal(made.status, 201, made.text)
    const id = made.body.id as string
    let seen: BatchAnswer | undefined
    await eventually('the refused batch ends', async () => {
      seen = (await stack.call(stack.bob, 'GET', `/api/batches/${id}`)).body as unknown as BatchAnswer
      return seen.state !== 'running'
    })
    assert.equal(seen!.state, 'completed_with_errors')
    assert.deepEqual(seen!.counts, { queued: 0, running: 0, completed: 0, failed: 3, canceled: 0 })
    const rows = (await stack.call(stack.bob, 'GET', `/api/batches/${id}/export`)).text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row)
    assert.deepEqual(
      rows.map((r) => [r.index, r.state, r.task_id]),
      [
        [0, 'failed', null],
        [1, 'failed', null],
        [2, 'failed', null],
      ],
    )
    for (const row of rows) assert.match(row.error ?? '', /revoked/)
  })

  it('finishes a batch of 200 across a kill -9 of the rental, each item run once, and exports it', async (t) => {
    // the rental in a process of its own, on the same data and port, so that it can be killed
    await stack.rental.close()
    const first = await launchRental(stack, children)
    await rentalReady(stack)
    const started = Date.now()
    const texts = Array.from({ length: 200 }, (_, i) => text(1000 + i))
    const made = await create({ engagement_id: engagement, items: texts, concurrency: 20 })
    assert.equal(made.status, 201, made.text)
    const id = made.body.id as string
    // waited for without a time limit of its own: a busy machine runs the tasks slowly
    while ((await batch(id)).counts.completed < 40) await new Promise((r) => setTimeout(r, 100))
    const mid = await batch(id)
    t.diagnostic(`at the kill: ${JSON.stringify(mid.counts)}`)
    assert.ok(mid.counts.queued > 0, 'the kill is mid-batch')
    first.child.kill('SIGKILL')
    await first.exited
    const before = Date.now()
    // the rental started again in this process, on the same data: the batch goes on from where it was
    await stack.restartRental()
    let finished: BatchAnswer | undefined
    let lastQueued = 0
    const deadline = Date.now() + 300_000
    while (Date.now() < deadline) {
      finished = await batch(id)
      if (finished.state !== 'running') break
      if (finished.counts.queued === 0 && !lastQueued) lastQueued = Date.now() - before
      await new Promise((r) => setTimeout(r, 200))
    }
    t.diagnostic(
      `killed at ${before - started} ms; every item had its task ${lastQueued} ms after the restart, ` +
        `and the batch finished after ${Date.now() - before} ms (a run the killed process held waits for its lease)`,
    )
    assert.equal(finished?.state, 'completed', JSON.stringify(finished))
    assert.deepEqual(finished.counts, { queued: 0, running: 0, completed: 200, failed: 0, canceled: 0 })

    // every item ran exactly once: one task per item text, among all the organization's tasks
    const hashes = new Map<string, number>()
    for (let offset = 0; ; offset += 100) {
      const page = await stack.call(stack.alice, 'GET', `/api/tasks?limit=100&offset=${offset}`)
      const tasks = page.body.tasks as Array<{ input_sha256: string }>
      for (const task of tasks) hashes.set(task.input_sha256, (hashes.get(task.input_sha256) ?? 0) + 1)
      if (tasks.length < 100) break
    }
    for (const [i, item] of texts.entries()) assert.equal(hashes.get(agentInputHash([item])), 1, `item ${i}`)

    // the log: one task.created by the batch per item, progress each tenth, one batch.completed
    interface Logged {
      seq: number
      subjects: Record<string, string>
      actor: { type: string; id: string | null }
      data: Record<string, unknown>
    }
    const logged = async (type: string) => {
      const found: Logged[] = []
      for (let before: number | null | undefined; before !== null;) {
        const page = await stack.call(
          stack.alice,
          'GET',
          `/api/audit?type=${type}&limit=100${before ? `&before=${before}` : ''}`,
        )
        assert.equal(page.status, 200, page.text)
        found.push(...(page.body.events as Logged[]))
        before = page.body.next_before as number | null
      }
      return found.filter((e) => e.subjects.batch_id === id || e.actor.id === id)
    }
    const created = await logged('task.created')
    assert.equal(created.length, 200)
    assert.ok(created.every((e) => e.actor.type === 'batch'))
    assert.equal(new Set(created.map((e) => e.subjects.task_id)).size, 200)
    const progressed = (await logged('batch.progressed')).reverse().map((e) => e.data.ended as number)
    assert.ok(progressed.length >= 1 && progressed.length <= 11, `progress events: ${progressed.join(',')}`)
    assert.deepEqual(
      progressed,
      [...progressed].sort((a, b) => a - b),
    )
    assert.equal(progressed.at(-1), 200)
    const completedEvents = await logged('batch.completed')
    assert.equal(completedEvents.length, 1)
    assert.equal(completedEvents[0]!.data.state, 'completed')

    const jsonl = await stack.call(stack.alice, 'GET', `/api/batches/${id}/export?format=jsonl`)
    assert.equal(jsonl.status, 200)
    assert.match(jsonl.headers.get('content-type') ?? '', /^application\/jsonl/)
    assert.match(
      jsonl.headers.get('content-disposition') ?? '',
      /^attachment; filename="batch-bat_[\w-]+\.jsonl"$/,
    )
    const rows = jsonl.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row)
    assert.equal(rows.length, 200)
    assert.deepEqual(
      rows.map((r) => r.index),
      texts.map((_, i) => i),
    )
    assert.equal(new Set(rows.map((r) => r.task_id)).size, 200)
    for (const row of rows) {
      assert.equal(row.state, 'completed')
      assert.ok(row.output && row.output.text, `row ${row.index} has its output`)
      assert.match(row.receipt_leaf_hash ?? '', /^[A-Za-z0-9+/=]+$/)
      assert.equal(row.error, null)
    }

    const csv = await stack.call(stack.alice, 'GET', `/api/batches/${id}/export?format=csv`)
    assert.equal(csv.status, 200)
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/)
    const records = parse(csv.text, { columns: true }) as Array<Record<string, string>>
    assert.equal(records.length, 200)
    for (const [i, record] of records.entries()) {
      const row = rows[i]!
      assert.equal(record.index, String(row.index))
      assert.equal(record.task_id, row.task_id)
      // a field a spreadsheet would take for a formula (a base64 hash may start with +) is prefixed with '
      const guarded = (value: string) => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value)
      assert.equal(record.receipt_leaf_hash, guarded(row.receipt_leaf_hash!))
      assert.equal(record.output_text, guarded(row.output!.text!))
      assert.deepEqual(JSON.parse(record.output_data!), row.output!.data)
    }
  })
})
