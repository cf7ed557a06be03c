import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '@svc/kit/testing/otlp-receiver'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { ADMIN, eventually } from '../support/stack.ts'

/**
 * The ledger as the rental reaches it, through a proxy that can be "down" (503 to every request):
 * a ledger outage that ends, which stopping the real ledger could not give back.
 */
async function startLedgerProxy() {
  let target = ''
  let down = false
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (down || !target) {
        res.writeHead(503, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { code: 'unavailable', message: 'the ledger is down (test)' } }))
        return
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
      ) as Record<string, string>
      void fetch(`${target}${req.url}`, {
        method: req.method!,
        headers,
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      }).then(
        async (answer) => {
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
          res.end(Buffer.from(await answer.arrayBuffer()))
        },
        () => res.writeHead(502).end(),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setTarget: (url: string) => void (target = url),
    setDown: (value: boolean) => void (down = value),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

const HEX32 = /^[0-9a-f]{32}$/

describe('one trace per task across the services (OTLP/HTTP JSON)', () => {
  let receiver: OtlpReceiver
  let proxy: Awaited<ReturnType<typeof startLedgerProxy>>
  let stack: FullStack
  let engagement: string
  const TEXT = 'Confidential memo for tracing: the quarterly figures of Example Holdings are private.'

  const flush = async () => {
    for (const s of [stack.rental, stack.agents, stack.ledger, stack.idp]) await s.ctx.tracing.flush()
  }
  const post = async (async: boolean) => {
    const res = await stack.call(stack.alice, 'POST', '/api/tasks', {
      engagement_id: engagement,
      text: TEXT,
      async,
    })
    assert.equal(res.status, 200, res.text)
    return res.body.task as { id: string; trace_id: string | null }
  }
  const task = async (id: string) =>
    (await stack.call(stack.alice, 'GET', `/api/tasks/${id}`)).body as {
      state: string
      trace_id: string | null
      receipt: { ledger_index: number | null } | null
    }
  /** The task's trace once it holds spans named `names` (each service flushed first). */
  const traceWith = async (traceId: string, names: string[]) => {
    let spans: ReceivedSpan[] = []
    await eventually(`the trace holds ${names.join(', ')}`, async () => {
      await flush()
      spans = receiver.trace(traceId)
      return names.every((n) => spans.some((s) => s.name === n))
    })
    return spans
  }

  before(async () => {
    receiver = await startOtlpReceiver()
    proxy = await startLedgerProxy()
    // every service of this process reads these at its start (testEnv copies process.env)
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json'
    stack = await startFullStack({ LEDGER_URL: proxy.url, RENTAL_TASK_RETRY_BASE_MS: '200' })
    proxy.setTarget(stack.ledger.url)
    const agentDid = await stack.agentOf('job_summary')
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', agentDid, stack.newClientKey())
  })
  after(async () => {
    await stack?.close()
    await proxy?.close()
    await receiver?.close()
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT
    delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL
  })

  it('gives a sync task one trace with spans from the rental, the agents and the ledger', async () => {
    const created = await post(false)
    assert.match(created.trace_id ?? '', HEX32)
    const traceId = created.trace_id!
    assert.equal((await task(created.id)).trace_id, traceId, 'GET answers the same trace_id')
    await eventually(
      'the receipt is on the ledger',
      async () => typeof (await task(created.id)).receipt?.ledger_index === 'number',
    )
    const spans = await traceWith(traceId, [
      'POST /api/tasks',
      'agent work',
      'agent result signature check',
      'receipt record',
      'receipt deliver',
      'POST /v1/receipts',
      'receipt signature check',
    ])
    const services = new Set(spans.map((s) => s.service))
    for (const name of ['rental', 'agents', 'ledger']) assert.ok(services.has(name), `a span from ${name}`)
    // the rental's server span is the root, and carries the task's ids
    const root = spans.find((s) => s.name === 'POST /api/tasks')!
    assert.equal(root.parentSpanId, '', 'the request started the trace')
    assert.equal(root.attributes['svc.task.id'], created.id)
    assert.equal(root.attributes['svc.engagement.id'], engagement)
    assert.equal(root.attributes['http.response.status_code'], 200)
    // every span but the root has its parent in the trace: one tree across the processes
    const ids = new Set(spans.map((s) => s.spanId))
    for (const s of spans)
      if (s !== root) assert.ok(ids.has(s.parentSpanId), `${s.service} ${s.name} has its parent in the trace`)
    // the hop to the agents: the rental's client span is the parent of the agents' server span
    const agentServer = spans.find((s) => s.service === 'agents' && s.kind === 2)!
    const caller = spans.find((s) => s.spanId === agentServer.parentSpanId)!
    assert.equal(caller.service, 'rental')
    assert.equal(caller.kind, 3, 'a client span')
    // database spans: operation and table only
    const insert = spans.find((s) => s.name === 'insert receipt_outbox')
    assert.ok(insert, 'the receipt’s insert into the outbox is a span')
    assert.deepEqual(Object.keys(insert.attributes).sort(), [
      'db.collection.name',
      'db.operation.name',
      'db.system.name',
    ])
  })

  it('keeps an async task’s run and its receipt, delivered after a ledger outage, in its trace', async () => {
    proxy.setDown(true)
    const created = await post(true)
    const traceId = created.trace_id!
    assert.match(traceId, HEX32)
    await eventually('the async task completes', async () => (await task(created.id)).state === 'completed')
    // the delivery failed while the ledger was down
    await eventually('a delivery attempt failed', async () => {
      const rows = await stack.db
        .selectFrom('receipt_outbox' as never)
        .select(['attempts' as never])
        .where('subject' as never, '=', created.id as never)
        .execute()
      return rows.some((r) => Number((r as { attempts: number }).attempts) > 0)
    })
    proxy.setDown(false)
    await eventually(
      'the receipt reaches the ledger',
      async () => typeof (await task(created.id)).receipt?.ledger_index === 'number',
    )
    const spans = await traceWith(traceId, [
      'POST /api/tasks',
      'job rental.tasks.run',
      'agent work',
      'POST /v1/receipts',
    ])
    const deliveries = spans.filter((s) => s.name === 'receipt deliver')
    assert.ok(
      deliveries.length >= 2,
      `the failed and the later delivery are both in the trace (${deliveries.length})`,
    )
    const failed = spans.filter(
      (s) => s.service === 'rental' && s.kind === 3 && s.attributes['http.response.status_code'] === 503,
    )
    assert.ok(failed.length >= 1, 'the refused call to the ledger is a span of the trace')
    const job = spans.find((s) => s.name === 'job rental.tasks.run')!
    assert.equal(job.attributes['svc.task.id'], created.id)
  })

  it('links the ledger’s batch to every append it integrated', async () => {
    await flush()
    const batches = receiver.spans.filter((s) => s.name === 'ledger batch')
    assert.ok(batches.length > 0)
    for (const b of batches)
      assert.ok(b.links.length >= 1 && b.links.length === b.attributes['svc.ledger.batch_size'])
    assert.ok(receiver.spans.some((s) => s.name === 'ledger checkpoint'))
  })

  it('puts no task text, token, secret or email in any attribute', async () => {
    await flush()
    assert.ok(receiver.spans.length > 20)
    const values = receiver.spans.flatMap((s) => [s.name, ...Object.values(s.attributes).map(String)])
    const words = TEXT.split(' ').filter((w) => w.length > 8)
    for (const v of values) {
      for (const w of words) assert.ok(!v.includes(w), `"${v}" holds the task's text`)
      assert.doesNotMatch(v, /@[a-z0-9-]+\./i, 'an email')
      assert.doesNotMatch(v, /bearer|dev-ledger-writer|eyJ[A-Za-z0-9_-]{10}/i, 'a token')
      assert.doesNotMatch(v, /\b(select|insert|update)\b.*\$\d/i, 'a statement with its values')
    }
  })

  it('exports the metrics operators watch, named as in Prometheus', async () => {
    const metrics = async (url: string, headers: Record<string, string> = {}) =>
      (await (await fetch(`${url}/metrics`, { headers })).text()).split('\n')
    const has = (lines: string[], pattern: RegExp) =>
      assert.ok(
        lines.some((l) => pattern.test(l)),
        String(pattern),
      )
    const rental = await metrics(stack.rental.url)
    has(rental, /^rental_tasks_created_total\{[^}]*mode="sync"[^}]*\} [1-9]/)
    has(rental, /^rental_tasks_created_total\{[^}]*mode="async"[^}]*\} [1-9]/)
    has(rental, /^rental_task_duration_seconds_count\{[^}]*state="completed"[^}]*\} [1-9]/)
    has(rental, /^receipt_outbox_waiting\{[^}]*\} 0$/)
    has(rental, /^receipt_outbox_oldest_age_seconds\{[^}]*\} 0$/)
    // the outage made delivery attempts fail
    has(rental, /^receipt_delivery_failures_total(\{[^}]*\})? [1-9]/)
    const ledger = await metrics(stack.ledger.url)
    has(ledger, /^ledger_batch_size_count\{[^}]*\} [1-9]/)
    has(ledger, /^ledger_checkpoint_lag_seconds_count\{[^}]*\} [1-9]/)
    const idp = await metrics(stack.idp.url, { 'x-admin-token': ADMIN })
    has(idp, /^idp_token_grants_total\{[^}]*grant_type="authorization_code"[^}]*\} [1-9]/)
  })
})
