import { randomBytes } from 'node:crypto'
import { type AddressInfo, createServer } from 'node:net'
import { join } from 'node:path'
import pino, { type Logger } from 'pino'
import { commonEnv, readEnv } from './config.ts'
import { type Database, openDatabase } from './db/database.ts'
import { migrate } from './db/migrator.ts'
import { migratedSnapshot } from './db/snapshot.ts'
import { ConfigError } from './errors.ts'
import type { ErrorShape } from './http/errors.ts'
import type { HealthCheck } from './http/health.ts'
import { type HomeLink, registerHome } from './http/home.ts'
import { type App, createHttpServer, type HttpOptions } from './http/server.ts'
import { type Kv, openKv } from './kv/index.ts'
import { repoRoot } from './paths.ts'
import { type Endpoint, readTopology, type ServiceName } from './topology.ts'
import { logMixin, startTracing, type Tracing } from './tracing.ts'

export type CommonConfig = ReturnType<typeof readCommon>

function readCommon(env: NodeJS.ProcessEnv) {
  const common = readEnv(commonEnv, env)
  return {
    nodeEnv: common.NODE_ENV ?? 'development',
    logLevel: common.LOG_LEVEL ?? 'info',
    host: common.HOST ?? '127.0.0.1',
    databaseUrl: common.DATABASE_URL,
    databaseSchema: common.DATABASE_SCHEMA,
    dataDir: common.DATA_DIR ?? join(repoRoot(), '.data'),
    databaseStatementTimeoutMs: common.DATABASE_STATEMENT_TIMEOUT_MS ?? 5_000,
    databaseConnectTimeoutMs: common.DATABASE_CONNECT_TIMEOUT_MS ?? 5_000,
    /** Named prepared statements on PostgreSQL; off behind a pooler that cannot keep them (PgBouncer's transaction mode before 1.21). */
    databasePreparedStatements: common.DATABASE_PREPARED_STATEMENTS ?? true,
    redisUrl: common.REDIS_URL,
    redisCommandTimeoutMs: common.REDIS_COMMAND_TIMEOUT_MS ?? 1_000,
    /** How often the job queue fails jobs whose lease expired (a crashed process's) so they are retried. */
    jobsMaintenanceS: common.JOBS_MAINTENANCE_S ?? 30,
    shutdownDelayMs: common.SHUTDOWN_DELAY_MS ?? 0,
    shutdownGraceMs: common.SHUTDOWN_GRACE_MS ?? 10_000,
  }
}

export interface ServiceContext<C> {
  name: ServiceName
  config: C
  common: CommonConfig
  topology: Record<ServiceName, Endpoint>
  /** This service's own public base URL. */
  baseUrl: string
  /** Absent for a service that keeps no data (the demo agents). */
  database: Database | undefined
  kv: Kv
  log: Logger
  /** OpenTelemetry (OTEL_* variables); `enabled` false when no endpoint is set. */
  tracing: Tracing
  /** Adds a readiness check (`/readyz`): a dependency the service cannot serve without. */
  addReadinessCheck(check: HealthCheck): void
}

export interface ServiceSpec<C> {
  name: ServiceName
  version: string
  description: string
  /** The folder of forward-only migrations; omit for a service with no database. */
  migrations?: string
  errorShape: ErrorShape | ((request: import('fastify').FastifyRequest) => ErrorShape)
  healthz?: 'liveness' | 'components'
  securitySchemes?: HttpOptions['securitySchemes']
  /** The service's error catalogue (`errorCatalogue(...).codes`), listed in its OpenAPI document. */
  errorCodes?: HttpOptions['errorCodes']
  readConfig(env: NodeJS.ProcessEnv, common: CommonConfig): C
  metricsGuard?(ctx: ServiceContext<C>): (request: import('fastify').FastifyRequest) => void
  /** Registers the service's areas on the app. */
  build(app: App, ctx: ServiceContext<C>): Promise<void>
  /**
   * The links of the service's root page (`GET /`: a page, or JSON for `Accept: application/json`);
   * `/docs` is always first. Omit it for a service that serves its own `/`.
   */
  home?(ctx: ServiceContext<C>): HomeLink[]
  /** Printed once the service listens (the idp's generated dev admin token, say). */
  banner?(ctx: ServiceContext<C>): string[]
}

export interface RunningService<C> {
  app: App
  ctx: ServiceContext<C>
  /** Where it listens: the base URL for clients in tests. */
  url: string
  close(): Promise<void>
}

export interface StartOptions {
  /** A fresh, throwaway database (in-memory PGlite, or a new schema dropped on close) and a free port: for tests. */
  fresh?: boolean
}

/**
 * Development defaults that must not run a real deployment: the embedded database (one process,
 * one machine) and the in-process kv (replay caches and rate limits not shared between instances).
 */
function refuseUnsafeInProduction(common: CommonConfig, needsDatabase: boolean) {
  if (common.nodeEnv !== 'production' || !needsDatabase) return
  if (!common.databaseUrl) throw new ConfigError('DATABASE_URL must be set when NODE_ENV=production')
  if (!common.redisUrl) throw new ConfigError('REDIS_URL must be set when NODE_ENV=production')
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, host, () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/**
 * Starts a service: config, database and migrations, kv, the HTTP app, listening. A throwaway
 * service picks its port before it builds (its URLs name it), and an outgoing connection of any
 * process may take that ephemeral port meanwhile: then it starts again on another.
 */
export async function startService<C>(
  spec: ServiceSpec<C>,
  env: NodeJS.ProcessEnv = process.env,
  options: StartOptions = {},
): Promise<RunningService<C>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServiceOnce(spec, env, options)
    } catch (err) {
      const taken = (err as NodeJS.ErrnoException).code === 'EADDRINUSE'
      if (!options.fresh || !taken || attempt >= 3) throw err
    }
  }
}

/** Where a throwaway service's siblings not given to it answer: nowhere (the discard port refuses). */
const NOWHERE: Endpoint = { port: 9, url: 'http://127.0.0.1:9' }

/**
 * A throwaway (test) service reaches only the siblings it was given (`LEDGER_URL`…): the default
 * addresses are those of a developer's `npm start`, which a test must never write receipts to.
 */
function unlinkSiblings(topology: Record<ServiceName, Endpoint>, self: ServiceName, env: NodeJS.ProcessEnv) {
  for (const name of Object.keys(topology) as ServiceName[]) {
    const upper = name.toUpperCase()
    if (name !== self && !env[`${upper}_URL`] && !env[`${upper}_PORT`]) topology[name] = NOWHERE
  }
}

async function startServiceOnce<C>(
  spec: ServiceSpec<C>,
  env: NodeJS.ProcessEnv,
  options: StartOptions,
): Promise<RunningService<C>> {
  const common = readCommon(env)
  refuseUnsafeInProduction(common, Boolean(spec.migrations))
  const topology = readTopology(env)
  if (options.fresh) unlinkSiblings(topology, spec.name, env)
  const config = spec.readConfig(env, common)
  // decided once at start: without an OTLP endpoint nothing is loaded and logs carry no trace ids
  const tracing = await startTracing(env, spec.name)
  const log = pino({
    level: common.logLevel,
    base: { service: spec.name },
    ...(tracing.enabled ? { mixin: logMixin } : {}),
  })
  const tag = options.fresh ? `t${randomBytes(5).toString('hex')}` : undefined
  // a throwaway service knows its port before it builds, so every URL it issues names it
  const port = tag ? await freePort(common.host) : undefined
  const onError = (component: string) => (err: Error) => log.warn({ err: err.message }, `${component} error`)

  let database: Database | undefined
  if (spec.migrations) {
    // a fresh embedded database is a cluster of its own: it starts from the service's migrated snapshot
    const freshEmbedded = Boolean(tag) && !common.databaseUrl
    database = await openDatabase({
      url: common.databaseUrl,
      schema: freshEmbedded ? spec.name : tag ? `${tag}_${spec.name}` : (common.databaseSchema ?? spec.name),
      dataDir: tag ? undefined : join(common.dataDir, spec.name),
      snapshot: freshEmbedded ? await migratedSnapshot(spec.name, spec.migrations) : undefined,
      dropSchemaOnClose: Boolean(tag),
      applicationName: spec.name,
      onError: onError('database'),
      statementTimeoutMs: common.databaseStatementTimeoutMs,
      connectTimeoutMs: common.databaseConnectTimeoutMs,
      preparedStatements: common.databasePreparedStatements,
      tracer: tracing.tracer,
    })
    try {
      const applied = await migrate(database, spec.migrations)
      if (applied.length) log.info({ applied }, 'migrations applied')
    } catch (err) {
      await database.close()
      throw err
    }
  }
  const kv = openKv(common.redisUrl, tag ? `${tag}:${spec.name}` : spec.name, {
    onError: onError('redis'),
    commandTimeoutMs: common.redisCommandTimeoutMs,
  })
  const checks: HealthCheck[] = []
  const ctx: ServiceContext<C> = {
    name: spec.name,
    config,
    common,
    topology,
    baseUrl: port ? `http://${common.host}:${port}` : topology[spec.name].url,
    database,
    kv,
    log,
    tracing,
    addReadinessCheck: (check) => void checks.push(check),
  }
  if (database) checks.push({ name: 'db', check: () => database.ping() })
  checks.push({
    name: 'redis',
    degradable: true,
    ...(kv.backend === 'redis' ? { check: () => kv.ping() } : {}),
  })

  const app = await createHttpServer({
    name: spec.name,
    version: spec.version,
    description: spec.description,
    logger: log,
    errorShape: spec.errorShape,
    checks,
    ...(spec.healthz ? { healthz: spec.healthz } : {}),
    ...(spec.securitySchemes ? { securitySchemes: spec.securitySchemes } : {}),
    ...(spec.errorCodes ? { errorCodes: spec.errorCodes } : {}),
    ...(spec.metricsGuard ? { metricsGuard: spec.metricsGuard(ctx) } : {}),
    tracing,
  })
  app.addHook('onClose', async () => {
    await kv.close()
    await database?.close()
    await tracing.shutdown().catch(() => {})
  })
  try {
    await spec.build(app, ctx)
    if (spec.home) {
      const links = [{ rel: 'docs', title: 'API reference', href: '/docs' }, ...spec.home(ctx)]
      const home = { service: spec.name, version: spec.version, description: spec.description, links }
      registerHome(app, home, ctx.baseUrl)
    }
    await app.listen({ host: common.host, port: port ?? topology[spec.name].port })
  } catch (err) {
    await app.close()
    throw err
  }
  const address = app.server.address() as AddressInfo
  const url = tag ? `http://${common.host}:${address.port}` : ctx.baseUrl
  // requests still open after the grace period (a client that went away mid-answer, a stream) are
  // cut, so that closing never waits on them; a throwaway test service gives them a second
  const graceMs = tag ? Math.min(1_000, ctx.common.shutdownGraceMs) : ctx.common.shutdownGraceMs
  const close = async () => {
    app.lifecycle.draining = true
    app.lifecycle.closing = true
    const cut = setTimeout(() => app.server.closeAllConnections(), graceMs)
    try {
      await app.close()
    } finally {
      clearTimeout(cut)
    }
  }
  return { app, ctx, url, close }
}

/**
 * The process entry of a service: starts it, prints its banner, and on SIGTERM or SIGINT drains
 * (readiness fails), waits SHUTDOWN_DELAY_MS, stops taking requests, lets in-flight ones finish
 * within SHUTDOWN_GRACE_MS, and closes its database.
 */
export async function runMain<C>(spec: ServiceSpec<C>): Promise<void> {
  let service: RunningService<C>
  try {
    service = await startService(spec)
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${spec.name}: ${err.message}\n`)
      process.exit(2)
    }
    process.stderr.write(`${spec.name}: failed to start: ${(err as Error).stack ?? err}\n`)
    process.exit(1)
  }
  const { app, ctx } = service
  ctx.log.info(
    { url: ctx.baseUrl, backend: ctx.database?.backend ?? 'none', kv: ctx.kv.backend },
    'listening',
  )
  for (const line of spec.banner?.(ctx) ?? []) ctx.log.info({ banner: true }, line)
  // the last line of a start: a supervisor (npm start) knows every banner line came before it
  ctx.log.info({ started: true }, 'started')

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    ctx.log.info({ signal }, 'draining')
    app.lifecycle.draining = true
    setTimeout(() => {
      ctx.log.error('shutdown grace period over: exiting with requests still open')
      process.exit(1)
    }, ctx.common.shutdownDelayMs + ctx.common.shutdownGraceMs).unref()
    await new Promise((r) => setTimeout(r, ctx.common.shutdownDelayMs))
    await service.close()
    ctx.log.info('stopped')
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}
