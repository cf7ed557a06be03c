import formbody from '@fastify/formbody'
import swagger from '@fastify/swagger'
import type { OpenAPIV3 } from 'openapi-types'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify'
import { type ErrorCodeSpec, errorCodeSchema } from '../error-codes.ts'
import { AppError } from '../errors.ts'
import { renderApiDocs } from './api-docs.ts'
import { answerUnservedRequests, clientErrorHandler, hostHeaderError, newRequestId } from './client-errors.ts'
import { type ErrorShape, formatValidationErrors, sendError, toAppError } from './errors.ts'
import { type HealthCheck, type Lifecycle, registerHealth } from './health.ts'
import { refuseNonFiniteNumbers } from './finite-numbers.ts'
import { registerMetrics } from './metrics.ts'
import { securePages } from './page-headers.ts'
import { traceRequests } from './trace-hooks.ts'
import type { Tracing } from '../tracing.ts'
import { compileValidator, compileSerializer, parseForm, refuseUndecodableBody } from './validation.ts'

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

export interface HttpOptions {
  name: string
  version: string
  description: string
  logger: FastifyBaseLogger
  /** The error body shape; a function chooses per request (the idp's protocol vs. console routes). */
  errorShape: ErrorShape | ((request: FastifyRequest) => ErrorShape)
  checks: HealthCheck[]
  healthz?: 'liveness' | 'components'
  /** Throws to refuse `/metrics` (the idp asks for its admin token). */
  metricsGuard?: (request: FastifyRequest) => void | Promise<void>
  bodyLimit?: number
  trustProxy?: boolean
  /** OpenAPI security schemes that routes name in `schema.security`. */
  securitySchemes?: Record<string, OpenAPIV3.SecuritySchemeObject>
  /** The service's error catalogue, listed in the OpenAPI document as `components.schemas.ErrorCode`. */
  errorCodes?: Record<string, ErrorCodeSpec>
  /** The service's tracing: a server span per request when it is enabled. */
  tracing?: Tracing
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/
/** The longest request path served (the query string is not counted): longer is 414. */
const MAX_PATH = 8192

declare module 'fastify' {
  interface FastifyInstance {
    lifecycle: Lifecycle
  }
}

/**
 * The Fastify app every service starts from: request ids, pino logs, the central error handler,
 * TypeBox schemas validated strictly, OpenAPI at `/openapi.json`, metrics, health and readiness.
 */
export async function createHttpServer(options: HttpOptions): Promise<App> {
  const shapeOf =
    typeof options.errorShape === 'function'
      ? options.errorShape
      : (_request: FastifyRequest) => options.errorShape as ErrorShape
  // before a request is parsed there is no request to choose by
  const parserShape = typeof options.errorShape === 'function' ? 'api' : options.errorShape
  const app = Fastify({
    loggerInstance: options.logger,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId()
    },
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: options.trustProxy ?? false,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    schemaErrorFormatter: formatValidationErrors,
    // errors Fastify raises before routing (a malformed URL): the same shape as every other error
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id)
      sendError(shapeOf(request), toAppError(err), request, reply)
    },
    // what Node's parser refuses, and a missing Host (checked in onRequest, in the service's shape)
    clientErrorHandler: clientErrorHandler(parserShape, options.logger),
    http: { requireHostHeader: false },
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(compileValidator)
  app.setSerializerCompiler(compileSerializer)
  answerUnservedRequests(app.server, parserShape)

  const lifecycle: Lifecycle = { draining: false, closing: false }
  app.decorate('lifecycle', lifecycle)
  // first, so the server span covers every other hook
  if (options.tracing?.tracer) traceRequests(app, options.tracing.tracer)

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
    const badHost = hostHeaderError(request)
    if (badHost) return sendError(shapeOf(request), badHost, request, reply)
    if (request.url.split('?')[0]!.length > MAX_PATH)
      return sendError(
        shapeOf(request),
        new AppError(414, 'uri_too_long', `the request path is longer than ${MAX_PATH} characters`),
        request,
        reply,
      )
    if (lifecycle.closing) {
      reply.header('connection', 'close')
      return sendError(
        shapeOf(request),
        new AppError(503, 'shutting_down', 'the service is shutting down'),
        request,
        reply,
      )
    }
  })

  app.addHook('preParsing', async (request) => refuseUndecodableBody(request))

  // A response sent while closing ends its connection, so no keep-alive socket outlives the close.
  app.addHook('onSend', async (_request, reply) => {
    if (lifecycle.closing) reply.header('connection', 'close')
  })

  app.setErrorHandler((err, request, reply) => {
    const appError = toAppError(err)
    if (appError.status >= 500) request.log.error({ err }, 'request failed')
    else request.log.info({ code: appError.code, status: appError.status }, appError.message)
    return sendError(shapeOf(request), appError, request, reply)
  })
  // RFC 9110 §15.5.6: a path that exists under other methods answers 405 with Allow, not 404
  const routes: Array<{ pattern: RegExp; methods: Set<string> }> = []
  app.addHook('onRoute', (route) => {
    const source = `^${route.url
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/:[^/]+/g, '[^/]+')
      .replace(/\*/g, '.*')}$`
    let entry = routes.find((r) => r.pattern.source === source)
    if (!entry) routes.push((entry = { pattern: new RegExp(source), methods: new Set() }))
    for (const method of [route.method].flat()) entry.methods.add(method)
  })
  app.setNotFoundHandler((request, reply) => {
    const fullPath = request.url.split('?')[0]!
    // a long path is not echoed whole
    const path = fullPath.length > 200 ? `${fullPath.slice(0, 200)}…` : fullPath
    const allowed = new Set(routes.filter((r) => r.pattern.test(fullPath)).flatMap((r) => [...r.methods]))
    if (allowed.size > 0)
      return sendError(
        shapeOf(request),
        new AppError(405, 'method_not_allowed', `${path} does not answer ${request.method}`, {
          allow: [...allowed].sort().join(', '),
        }),
        request,
        reply,
      )
    return sendError(
      shapeOf(request),
      new AppError(404, 'not_found', `no route for ${request.method} ${path}`),
      request,
      reply,
    )
  })

  await app.register(formbody, { parser: parseForm })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: options.name, version: options.version, description: options.description },
      components: {
        securitySchemes: options.securitySchemes ?? {},
        ...(options.errorCodes ? { schemas: { ErrorCode: errorCodeSchema(options.errorCodes) } } : {}),
      },
    },
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  const errorShapes: ErrorShape[] =
    typeof options.errorShape === 'function' ? ['oauth', 'api'] : [options.errorShape]
  // the API reference for people: the OpenAPI document rendered as one self-contained page
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .header('x-content-type-options', 'nosniff')
      .send(renderApiDocs(app.swagger() as OpenAPIV3.Document, errorShapes)),
  )
  refuseNonFiniteNumbers(app)
  securePages(app)
  registerMetrics(app, options.name, options.metricsGuard)
  registerHealth(app, { checks: options.checks, lifecycle, healthz: options.healthz ?? 'liveness' })
  return app
}
