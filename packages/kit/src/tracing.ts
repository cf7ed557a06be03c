import { channel } from 'node:diagnostics_channel'
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
  TraceFlags,
} from '@opentelemetry/api'
import { ConfigError } from './errors.ts'

export { SpanKind } from '@opentelemetry/api'

/**
 * OpenTelemetry for every service, configured by the standard variables only. Without an OTLP
 * endpoint (or with OTEL_SDK_DISABLED=true) nothing is loaded: no SDK, no exporter, no context
 * manager, no hooks; every helper below then costs one boolean test. The spans are made by the
 * kit's own wrappers (server hooks, the database's query log, undici's diagnostics channels for
 * every outgoing fetch, the jobs and the receipt outbox), not by require-hook instrumentations,
 * which do not see modules that esbuild bundled or that tsx loads as ESM (docs/operations.md).
 *
 * Several services may run in one process (the tests): each has its own tracer provider (its own
 * `service.name`), and the tracer of the service doing the work travels in the context itself.
 */

export type OtlpProtocol = 'http/protobuf' | 'http/json'

export interface TracingConfig {
  serviceName: string
  /** The traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). */
  url: string
  protocol: OtlpProtocol
  sampler: string
  samplerArg: string | undefined
}

/** The tracing settings of a service, or undefined when tracing is off (no endpoint, or disabled). */
export function readTracingEnv(env: NodeJS.ProcessEnv, defaultName: string): TracingConfig | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined
  const tracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  const url = tracesUrl || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined)
  if (!url) return undefined
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
    env.OTEL_EXPORTER_OTLP_PROTOCOL ??
    'http/protobuf'
  ).trim()
  if (protocol !== 'http/protobuf' && protocol !== 'http/json')
    throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (not ${protocol})`)
  const sampler = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim()
  if (!SAMPLERS.includes(sampler))
    throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')} (not ${sampler})`)
  return {
    serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultName,
    url,
    protocol,
    sampler,
    samplerArg: env.OTEL_TRACES_SAMPLER_ARG,
  }
}

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
]

/** A service's tracing: `enabled` false is the no-endpoint case, where nothing was created. */
export interface Tracing {
  readonly enabled: boolean
  readonly serviceName: string | undefined
  readonly tracer: Tracer | undefined
  /** Exports what has ended (tests, before reading the receiver). */
  flush(): Promise<void>
  shutdown(): Promise<void>
}

export const NO_TRACING: Tracing = {
  enabled: false,
  serviceName: undefined,
  tracer: undefined,
  flush: async () => {},
  shutdown: async () => {},
}

/** True once any service of this process traces: every helper below returns at once before. */
let tracingOn = false
let exportersCreated = 0
/** How many OTLP exporters this process created (a test checks that none is without an endpoint). */
export const otlpExportersCreated = () => exportersCreated

/** Starts a service's tracing: loads the SDK and its exporter only when an endpoint is set. */
export async function startTracing(env: NodeJS.ProcessEnv, defaultName: string): Promise<Tracing> {
  const config = readTracingEnv(env, defaultName)
  if (!config) return NO_TRACING
  const [sdk, resources, hooks, exporterModule] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/context-async-hooks'),
    config.protocol === 'http/json'
      ? import('@opentelemetry/exporter-trace-otlp-http')
      : import('@opentelemetry/exporter-trace-otlp-proto'),
  ])
  if (!tracingOn) {
    context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable())
    subscribeOutgoing()
    tracingOn = true
  }
  const exporter = new exporterModule.OTLPTraceExporter({ url: config.url })
  exportersCreated++
  const ratio = Number(config.samplerArg ?? '1')
  const root = config.sampler.endsWith('always_off')
    ? new sdk.AlwaysOffSampler()
    : config.sampler.endsWith('traceidratio')
      ? new sdk.TraceIdRatioBasedSampler(Number.isFinite(ratio) ? ratio : 1)
      : new sdk.AlwaysOnSampler()
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': config.serviceName }),
    sampler: config.sampler.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root,
    spanProcessors: [new sdk.BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  })
  return {
    enabled: true,
    serviceName: config.serviceName,
    tracer: provider.getTracer('@svc/kit'),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  }
}

/** The context key under which the working service's tracer travels. */
const TRACER = createContextKey('svc.tracer')

/** The tracer of the service whose work `ctx` is (undefined outside traced work). */
export const tracerIn = (ctx: Context) => ctx.getValue(TRACER) as Tracer | undefined

/** A context whose work belongs to `tracer`'s service (a request, a job). */
export const withTracer = (ctx: Context, tracer: Tracer) => ctx.setValue(TRACER, tracer)

/** True when the current work is traced: a caller may skip building attributes otherwise. */
export const tracingActive = (): boolean => tracingOn && tracerIn(context.active()) !== undefined

/**
 * Runs `work` in a child span of the current one, named `name` (no span, no cost, when tracing is
 * off or the work is outside a traced request or job). Attributes name things (ids, types, counts),
 * never values a person wrote, nor secrets.
 */
export function withSpan<T>(
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
  options: { links?: Link[]; kind?: SpanKind } = {},
): Promise<T> {
  if (!tracingOn) return work()
  const parent = context.active()
  const tracer = tracerIn(parent)
  if (!tracer) return work()
  const span = tracer.startSpan(
    name,
    { attributes, kind: options.kind ?? SpanKind.INTERNAL, links: options.links ?? [] },
    parent,
  )
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work()
    } catch (err) {
      failSpan(span, err)
      throw err
    } finally {
      span.end()
    }
  })
}

/** `withSpan` for synchronous work (a signature check). */
export function inSpan<T>(name: string, attributes: Attributes, work: () => T): T {
  if (!tracingOn) return work()
  const parent = context.active()
  const tracer = tracerIn(parent)
  if (!tracer) return work()
  const span = tracer.startSpan(name, { attributes }, parent)
  try {
    return context.with(trace.setSpan(parent, span), work)
  } catch (err) {
    failSpan(span, err)
    throw err
  } finally {
    span.end()
  }
}

/** Sets attributes (`svc.task.id`, …) on the current span, when there is one. */
export function annotateSpan(attributes: Attributes): void {
  if (!tracingOn) return
  trace.getSpan(context.active())?.setAttributes(attributes)
}

/** The trace id of the current span, or undefined (tracing off, or no span). */
export function currentTraceId(): string | undefined {
  if (!tracingOn) return undefined
  return trace.getSpan(context.active())?.spanContext().traceId
}

/** The current span's context, to link to it later (a ledger batch links every append). */
export function currentSpanContext(): SpanContext | undefined {
  if (!tracingOn) return undefined
  return trace.getSpan(context.active())?.spanContext()
}

/** The W3C `traceparent` of the current span (stored with an outbox row or a job), or undefined. */
export function currentTraceparent(): string | undefined {
  if (!tracingOn) return undefined
  const span = trace.getSpan(context.active())
  return span ? traceparentOf(span.spanContext()) : undefined
}

const traceparentOf = (sc: SpanContext) =>
  `00-${sc.traceId}-${sc.spanId}-0${(sc.traceFlags & TraceFlags.SAMPLED).toString(16)}`

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const TRACESTATE = /^[\x20-\x7e]{0,512}$/

/** The remote parent a `traceparent` (and `tracestate`) names, as a context; the root context when invalid. */
export function contextFrom(
  traceparent: unknown,
  tracestate?: unknown,
  base: Context = ROOT_CONTEXT,
): Context {
  if (typeof traceparent !== 'string') return base
  const m = TRACEPARENT.exec(traceparent.trim())
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return base
  const state = typeof tracestate === 'string' && TRACESTATE.test(tracestate) ? tracestate : undefined
  const sc: SpanContext = {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: parseInt(m[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(state ? { traceState: stateOf(state) } : {}),
  }
  return trace.setSpanContext(base, sc)
}

/** A minimal TraceState: kept as received and passed on unchanged (we add no entry of our own). */
function stateOf(text: string): NonNullable<SpanContext['traceState']> {
  const state = {
    set: () => state,
    unset: () => state,
    get: (key: string) =>
      text
        .split(',')
        .find((kv) => kv.trim().startsWith(`${key}=`))
        ?.split('=')[1],
    serialize: () => text,
  }
  return state
}

/**
 * Runs a job's or a delivery's `work` as a span of the trace its creator stored (`traceparent`):
 * a child of the creator's span, so a receipt delivered minutes later is still in its task's trace.
 */
export function withStoredParent<T>(
  tracer: Tracer | undefined,
  traceparent: string | null | undefined,
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
  options: { kind?: SpanKind; links?: Link[] } = {},
): Promise<T> {
  if (!tracingOn) return work()
  const active = context.active()
  const chosen = tracer ?? tracerIn(active)
  if (!chosen) return work()
  const parent = traceparent ? contextFrom(traceparent, undefined, active) : active
  const span = chosen.startSpan(
    name,
    { kind: options.kind ?? SpanKind.CONSUMER, attributes, links: options.links ?? [] },
    parent,
  )
  return context.with(withTracer(trace.setSpan(parent, span), chosen), async () => {
    try {
      return await work()
    } catch (err) {
      failSpan(span, err)
      throw err
    } finally {
      span.end()
    }
  })
}

/** Marks a span failed with the error's class only (a message may carry what a person wrote). */
export function failSpan(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR })
  span.setAttribute('error.type', err instanceof Error ? err.name : 'error')
}

/** The `trace_id`/`span_id` pino adds to every log line written inside a span. */
export function logMixin(): Record<string, string> {
  const span = trace.getSpan(context.active())
  if (!span) return {}
  const sc = span.spanContext()
  return { trace_id: sc.traceId, span_id: sc.spanId }
}

// ---- outgoing requests: every undici request (global fetch and the undici package alike) ----

interface UndiciRequest {
  method: string
  origin: string | URL
  addHeader(name: string, value: string): unknown
}

const outgoing = new WeakMap<object, Span>()

/**
 * A client span per outgoing request, and its `traceparent` (and the caller's `tracestate`) on the
 * request. undici publishes these channels for Node's own fetch and for the undici package, so every
 * call out (A2A, the idp, the ledger, webhooks, tool calls) is covered without wrapping each caller.
 */
function subscribeOutgoing() {
  channel('undici:request:create').subscribe((message) => {
    const { request } = message as { request: UndiciRequest }
    const parent = context.active()
    const tracer = tracerIn(parent)
    if (!tracer) return
    let host = ''
    try {
      host = new URL(String(request.origin)).host
    } catch {}
    const span = tracer.startSpan(
      `${request.method} ${host}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'http.request.method': request.method, 'server.address': host },
      },
      parent,
    )
    outgoing.set(request, span)
    const sc = span.spanContext()
    request.addHeader('traceparent', traceparentOf(sc))
    const state = sc.traceState?.serialize()
    if (state) request.addHeader('tracestate', state)
  })
  channel('undici:request:headers').subscribe((message) => {
    const { request, response } = message as { request: object; response: { statusCode: number } }
    const span = outgoing.get(request)
    if (!span) return
    span.setAttribute('http.response.status_code', response.statusCode)
    if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
  })
  channel('undici:request:trailers').subscribe((message) => {
    const { request } = message as { request: object }
    outgoing.get(request)?.end()
    outgoing.delete(request)
  })
  channel('undici:request:error').subscribe((message) => {
    const { request, error } = message as { request: object; error: unknown }
    const span = outgoing.get(request)
    if (!span) return
    failSpan(span, error)
    span.end()
    outgoing.delete(request)
  })
}
