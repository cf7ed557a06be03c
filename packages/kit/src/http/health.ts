import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'

export interface HealthCheck {
  name: string
  /** Undefined when the component is not configured (Redis without REDIS_URL): reported, never failing. */
  check?: () => Promise<boolean>
  /**
   * The service still serves without it (Redis: rate limits count locally, replay-sensitive
   * operations answer 503): readiness reports it `degraded` and stays 200, so a load balancer
   * does not take out an instance that can serve. `/healthz` on the idp still names it `down`.
   */
  degradable?: boolean
}

type CheckResult = 'ok' | 'down' | 'degraded' | 'not_configured'

/** A check that does not answer within this is down: a probe must never hang. */
const CHECK_TIMEOUT_MS = 2_000

function within(check: () => Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    check().catch(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS)
    }),
  ]).finally(() => clearTimeout(timer))
}

export interface Lifecycle {
  /** Set when shutdown begins: readiness fails so load balancers stop sending traffic. */
  draining: boolean
  /** Set when the server is closing: new requests are refused with 503. */
  closing: boolean
}

async function runChecks(checks: HealthCheck[], readiness: boolean): Promise<Record<string, CheckResult>> {
  const results = await Promise.all(
    checks.map(async ({ name, check, degradable }): Promise<[string, CheckResult]> => {
      if (!check) return [name, 'not_configured']
      if (await within(check)) return [name, 'ok']
      return [name, readiness && degradable ? 'degraded' : 'down']
    }),
  )
  return Object.fromEntries(results)
}

const Checks = Type.Record(
  Type.String(),
  Type.Union([
    Type.Literal('ok'),
    Type.Literal('down'),
    Type.Literal('degraded'),
    Type.Literal('not_configured'),
  ]),
)

/**
 * `GET /readyz`: 200 `ready` when every dependency answers, 200 `degraded` when only a degradable
 * one fails (`{"status":"degraded","checks":{"db":"ok","redis":"degraded"}}`), 503 while draining
 * or when another fails.
 * `GET /healthz`: liveness (200 while the process serves), or with `components` the per-component
 * report `{status, db, redis}` with 503 naming what failed, as the idp's spec asks.
 */
export function registerHealth(
  app: FastifyInstance,
  options: { checks: HealthCheck[]; lifecycle: Lifecycle; healthz: 'liveness' | 'components' },
) {
  app.get(
    '/readyz',
    {
      schema: {
        summary:
          'Readiness: 503 while draining or when a dependency fails; 200 degraded when only Redis fails',
        tags: ['health'],
        response: {
          200: Type.Object({
            status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')]),
            checks: Checks,
          }),
          503: Type.Object({ status: Type.String(), checks: Checks }),
        },
      },
    },
    async (_request, reply) => {
      const checks = await runChecks(options.checks, true)
      if (options.lifecycle.draining) return reply.code(503).send({ status: 'draining', checks })
      const values = Object.values(checks)
      if (values.includes('down')) return reply.code(503).send({ status: 'not_ready', checks })
      return { status: values.includes('degraded') ? ('degraded' as const) : ('ready' as const), checks }
    },
  )

  if (options.healthz === 'liveness') {
    app.get(
      '/healthz',
      {
        schema: {
          summary: 'Liveness: 200 while the process serves requests',
          tags: ['health'],
          response: { 200: Type.Object({ status: Type.Literal('ok') }) },
        },
      },
      async () => ({ status: 'ok' as const }),
    )
    return
  }

  const Report = Type.Object(
    { status: Type.String(), failing: Type.Optional(Type.Array(Type.String())) },
    { additionalProperties: Type.String() },
  )
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Component health: 503 degraded naming each failing component',
        tags: ['health'],
        response: { 200: Report, 503: Report },
      },
    },
    async (_request, reply) => {
      const checks = await runChecks(options.checks, false)
      const failing = Object.keys(checks).filter((k) => checks[k] === 'down')
      if (failing.length === 0) return { status: 'ok', ...checks }
      return reply.code(503).send({ status: 'degraded', ...checks, failing })
    },
  )
}
