import {
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { contextFrom, withTracer } from '../tracing.ts'

const TRACED = Symbol('svc.trace')
type Traced = FastifyRequest & { [TRACED]?: { span: Span; ctx: Context } }

/** Probes and scrapes: not worth a trace each. */
const UNTRACED = new Set(['/metrics', '/healthz', '/readyz', '/livez'])

/**
 * A server span per request, a child of the caller's `traceparent` when it sent one. The span's
 * context is entered in `onRequest` and again in `preHandler`: Node runs the body's stream events
 * in the connection's context, so the handler would otherwise lose it after the body is read.
 */
export function traceRequests(app: FastifyInstance, tracer: Tracer): void {
  app.addHook('onRequest', (request: Traced, _reply, done) => {
    if (UNTRACED.has(request.url.split('?')[0]!)) return done()
    const parent = contextFrom(request.headers.traceparent, request.headers.tracestate)
    const span = tracer.startSpan(
      request.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method } },
      parent,
    )
    const ctx = withTracer(trace.setSpan(parent, span), tracer)
    request[TRACED] = { span, ctx }
    context.with(ctx, done)
  })
  app.addHook('preHandler', (request: Traced, _reply, done) => {
    const traced = request[TRACED]
    if (traced) context.with(traced.ctx, done)
    else done()
  })
  app.addHook('onResponse', (request: Traced, reply, done) => {
    const traced = request[TRACED]
    if (traced) {
      const route = request.routeOptions.url
      if (route) traced.span.updateName(`${request.method} ${route}`)
      traced.span.setAttributes({
        ...(route ? { 'http.route': route } : {}),
        'http.response.status_code': reply.statusCode,
      })
      if (reply.statusCode >= 500) traced.span.setStatus({ code: SpanStatusCode.ERROR })
      traced.span.end()
      request[TRACED] = undefined
    }
    done()
  })
  app.addHook('onRequestAbort', (request: Traced, done) => {
    const traced = request[TRACED]
    if (traced) {
      traced.span.setAttribute('error.type', 'aborted')
      traced.span.end()
      request[TRACED] = undefined
    }
    done()
  })
}
