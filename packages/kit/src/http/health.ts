import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'

export interface HealthCheck {
  name: string
  /** Undefined when the component is not configured (Redis without REDIS_URL): reported, never failing. */
  check?: () => Promise<boolean>
}

type CheckResult = 'ok' | 'down' | 'not_configured'

export interface Lifecycle {
  /** Set when shutdown begins: readiness fails so load balancers stop sending traffic. */
  draining: boolean
  /** Set when the server is closing: new requests are refused with 503. */
  closing: boolean
}

async function runChecks(checks: HealthCheck[]) {
  const results = await Promise.all(
    checks.map(async ({ name, check }): Promise<[string, CheckResult]> => {
      if (!check) return [name, 'not_configured']
      return [name, (await check().catch(() => false)) ? 'ok' : 'down']
    }),
  )
  return Object.fromEntries(results)
}

const Checks = Type.Record(
  Type.String(),
  Type.Union([Type.Literal('ok'), Type.Literal('down'), Type.Literal('not_configured')]),
)

/**
 * `GET /readyz`: 200 when every dependency answers, 503 while draining or when one fails.
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
        summary: 'Readiness: 503 while draining or when a dependency fails',
        tags: ['health'],
        response: {
          200: Type.Object({ status: Type.Literal('ready'), checks: Checks }),
          503: Type.Object({ status: Type.String(), checks: Checks }),
        },
      },
    },
    async (_request, reply) => {
      const checks = await runChecks(options.checks)
      if (options.lifecycle.draining) return reply.code(503).send({ status: 'draining', checks })
      const ok = Object.values(checks).every((v) => v !== 'down')
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready', checks })
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
      const checks = await runChecks(options.checks)
      const failing = Object.keys(checks).filter((k) => checks[k] === 'down')
      if (failing.length === 0) return { status: 'ok', ...checks }
      return reply.code(503).send({ status: 'degraded', ...checks, failing })
    },
  )
}
