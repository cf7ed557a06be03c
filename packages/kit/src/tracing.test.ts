import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { Kysely } from 'kysely'
import { Type } from 'typebox'
import { ConfigError } from './errors.ts'
import { type RunningService, type ServiceSpec, startService } from './service.ts'
import { request, tempFolder } from './testing.ts'
import { startOtlpReceiver } from './testing/otlp-receiver.ts'
import { logMixin, otlpExportersCreated, readTracingEnv } from './tracing.ts'

const spec: ServiceSpec<Record<string, never>> = {
  name: 'ledger',
  version: '1.0.0',
  description: 'a traced test service',
  migrations: tempFolder({
    '0001_notes.sql': 'create table notes (id text primary key, body text not null);',
  }),
  errorShape: 'api',
  readConfig: () => ({}),
  async build(app, ctx) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test's own table
    const db = ctx.database!.db as Kysely<any>
    // answers the log ids its handler sees: after the body is read, still inside the request's span
    app.post(
      '/notes',
      { schema: { body: Type.Object({ id: Type.String(), body: Type.String() }) } },
      async (request) => {
        await db.insertInto('notes').values(request.body).execute()
        return { log: logMixin() }
      },
    )
  },
}

/** The process's environment without any OTEL_ variable, and quiet logs. */
const plainEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_'))),
  LOG_LEVEL: 'silent',
  ...extra,
})

describe('tracing off: no endpoint, or the SDK disabled', () => {
  let service: RunningService<Record<string, never>>
  after(async () => service?.close())

  it('creates no exporter and adds no trace ids without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    service = await startService(spec, plainEnv(), { fresh: true })
    assert.equal(service.ctx.tracing.enabled, false)
    assert.equal(service.ctx.database!.tracer, undefined)
    const res = await request(`${service.url}/notes`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      },
      body: JSON.stringify({ id: 'n1', body: 'not traced' }),
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { log: {} })
    assert.equal(otlpExportersCreated(), 0)
  })

  it('reads nothing when OTEL_SDK_DISABLED=true, even with an endpoint', () => {
    assert.equal(
      readTracingEnv(
        { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' },
        'rental',
      ),
      undefined,
    )
    assert.equal(otlpExportersCreated(), 0)
  })
})

describe('tracing settings from the standard variables', () => {
  it('takes the traces endpoint as given, else appends /v1/traces to the base', () => {
    assert.equal(
      readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'idp')?.url,
      'http://collector:4318/v1/traces',
    )
    const both = readTracingEnv(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:4318/custom',
        OTEL_SERVICE_NAME: 'rental-eu',
      },
      'rental',
    )
    assert.equal(both?.url, 'http://other:4318/custom')
    assert.equal(both?.serviceName, 'rental-eu')
    assert.equal(both?.protocol, 'http/protobuf', 'the specification’s default')
    assert.equal(both?.sampler, 'parentbased_always_on')
  })

  it('refuses a protocol or sampler it does not serve', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
    assert.throws(() => readTracingEnv({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'idp'), ConfigError)
    assert.throws(() => readTracingEnv({ ...base, OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'idp'), ConfigError)
  })
})

describe('tracing on, over OTLP/HTTP protobuf', () => {
  let service: RunningService<Record<string, never>>
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>
  after(async () => {
    await service?.close()
    await receiver?.close()
  })

  it('continues the caller’s traceparent into the handler (after the body) and exports protobuf', async () => {
    receiver = await startOtlpReceiver()
    service = await startService(
      spec,
      plainEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }),
      { fresh: true },
    )
    assert.equal(service.ctx.tracing.enabled, true)
    assert.equal(otlpExportersCreated(), 1)
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const res = await request(`${service.url}/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ id: 'n2', body: 'a private note' }),
    })
    assert.equal(res.status, 200)
    const log = (res.body as { log: { trace_id?: string; span_id?: string } }).log
    assert.equal(log.trace_id, traceId, 'a log line in the handler carries the caller’s trace id')
    assert.match(log.span_id ?? '', /^[0-9a-f]{16}$/)
    assert.notEqual(log.span_id, '00f067aa0ba902b7', 'the server span is a child of the caller’s')
    await service.ctx.tracing.flush()
    assert.ok(receiver.protobufBodies.length > 0, 'the receiver got protobuf')
    const all = Buffer.concat(receiver.protobufBodies)
    assert.ok(all.includes(Buffer.from(traceId, 'hex')), 'the spans carry the trace id')
    assert.ok(all.includes(Buffer.from('insert notes')), 'the insert is a span named by operation and table')
    assert.ok(!all.includes(Buffer.from('a private note')), 'no bound value is exported')
  })
})
