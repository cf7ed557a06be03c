import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { Kysely, type LogEvent, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { lockDataDir } from './lock.ts'
import { ListedColumns } from './listed-columns.ts'
import { pooled } from './pg-pool.ts'
import { createPGlite } from './pglite.ts'
import { PGliteDialect } from './pglite-dialect.ts'
import { sqlTally } from './tally.ts'
import type { Tracer } from '@opentelemetry/api'
import { recordStatement } from '../tracing-statements.ts'
import { parsers } from './types.ts'

export type Backend = 'pglite' | 'postgres'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a Database of any schema can be migrated, pinged or closed
export interface Database<DB = any> {
  readonly db: Kysely<DB>
  readonly backend: Backend
  /** The schema holding this service's tables; pg-boss keeps its own beside it. */
  readonly schema: string
  /** The service's tracer when tracing is on: its statements are spans, its jobs continue their creator's trace. */
  readonly tracer: Tracer | undefined
  /** True when a trivial query answers within the timeout. */
  ping(timeoutMs?: number): Promise<boolean>
  /** After DDL: every connection drops its prepared statements before its next query, and the columns are read again. */
  schemaChanged(): Promise<void>
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** postgres:// URL; without it the embedded PGlite is used. */
  url?: string | undefined
  schema: string
  /** PGlite data directory; undefined keeps the embedded database in memory. */
  dataDir?: string | undefined
  /** A dumped data directory the in-memory PGlite starts from (a migrated snapshot, in tests). */
  snapshot?: Blob | undefined
  /** Drops the schema (and its jobs schema) on close: fresh databases for tests. */
  dropSchemaOnClose?: boolean
  applicationName?: string
  onError?: (err: Error) => void
  /**
   * PostgreSQL only. The server cancels a statement running longer (`statement_timeout`), and the
   * client gives up on a query unanswered for a second more (a silent server, a dead network) and
   * drops that connection. Default 5000.
   */
  statementTimeoutMs?: number | undefined
  /** PostgreSQL only: how long to wait for a connection (from the pool, or a new one). Default 5000. */
  connectTimeoutMs?: number | undefined
  /** A span per statement (its operation and table, never its values) inside traced work. */
  tracer?: Tracer | undefined
  /**
   * PostgreSQL only: run queries with parameters as named prepared statements, parsed and planned
   * once per connection (`pg-pool.ts`). Default true; off behind a pooler that cannot keep them.
   */
  preparedStatements?: boolean | undefined
}

/** Kysely's `log` and `plugins`: the SQL tally (benchmarks) and, when traced, a span per statement. */
function queryHooks(options: DatabaseOptions) {
  const tally = sqlTally()
  if (!options.tracer) return tally
  const count = tally.log
  const log = (event: LogEvent) => {
    count?.(event)
    recordStatement(
      event.query.sql,
      event.queryDurationMillis,
      event.level === 'error' ? event.error : undefined,
    )
  }
  return { ...tally, log }
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,40}$/

export async function openDatabase<DB = unknown>(options: DatabaseOptions): Promise<Database<DB>> {
  if (!SCHEMA_NAME.test(options.schema)) throw new Error(`invalid schema name ${options.schema}`)
  return options.url ? openPostgres<DB>(options, options.url) : openPGlite<DB>(options)
}

/** The schema pg-boss uses for a service's jobs. */
export const jobsSchema = (schema: string) => `${schema}_jobs`

async function openPostgres<DB>(options: DatabaseOptions, url: string): Promise<Database<DB>> {
  const statementTimeout = options.statementTimeoutMs ?? 5_000
  const pool = new pg.Pool({
    connectionString: url,
    options: `-c search_path=${options.schema}`,
    application_name: options.applicationName ?? options.schema,
    max: 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + 1_000,
    keepAlive: true,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        parsers[oid] ?? pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  })
  // A client that loses its server emits 'error'. The pool listens only while a client is idle,
  // so each client gets its own listener too: a connection lost mid-query must not end the process.
  pool.on('error', (err) => options.onError?.(err))
  pool.on('connect', (client) => client.on('error', (err) => options.onError?.(err)))
  const prepared = options.preparedStatements ?? true
  const connections = pooled(pool, prepared)
  // `*` written out as columns, so that statements in transactions are kept prepared too
  const listed = prepared ? new ListedColumns(options.schema) : undefined
  const hooks = queryHooks(options)
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: connections }),
    ...hooks,
    plugins: [...(listed ? [listed] : []), ...(hooks.plugins ?? [])],
  })
  await sql.raw(`create schema if not exists ${options.schema}`).execute(db)
  await listed?.load(db as Kysely<unknown>)
  const schemaChanged = async () => {
    connections.schemaChanged()
    await listed?.load(db as Kysely<unknown>)
  }
  return wrap(db, 'postgres', options, async () => {}, schemaChanged)
}

async function openPGlite<DB>(options: DatabaseOptions): Promise<Database<DB>> {
  let release = () => {}
  if (options.dataDir) {
    mkdirSync(dirname(options.dataDir), { recursive: true })
    release = lockDataDir(options.dataDir)
  }
  try {
    const pglite = await createPGlite(options.dataDir, options.snapshot)
    await pglite.exec(`create schema if not exists ${options.schema}; set search_path to ${options.schema}`)
    const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite), ...queryHooks(options) })
    // Kysely destroys only a driver it has used: close PGlite ourselves, or an unused one stays open
    // PGlite's driver prepares a statement again when PostgreSQL refuses its plan (pglite-dialect.ts)
    const schemaChanged = async () => {}
    return wrap(
      db,
      'pglite',
      options,
      async () => {
        if (!pglite.closed) await pglite.close()
        release()
      },
      schemaChanged,
    )
  } catch (err) {
    release()
    throw err
  }
}

function wrap<DB>(
  db: Kysely<DB>,
  backend: Backend,
  options: DatabaseOptions,
  afterClose: () => Promise<void>,
  schemaChanged: () => Promise<void>,
): Database<DB> {
  let closed = false
  return {
    db,
    backend,
    schema: options.schema,
    tracer: options.tracer,
    schemaChanged,
    async ping(timeoutMs = 1_500) {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs)
      })
      const query = sql`select 1`.execute(db).then(
        () => true,
        () => false,
      )
      try {
        return await Promise.race([query, timeout])
      } finally {
        clearTimeout(timer)
      }
    },
    async close() {
      if (closed) return
      closed = true
      if (options.dropSchemaOnClose && backend === 'postgres') {
        await sql
          .raw(
            `drop schema if exists ${options.schema} cascade; drop schema if exists ${jobsSchema(options.schema)} cascade`,
          )
          .execute(db)
          .catch(() => {})
      }
      await db.destroy()
      await afterClose()
    },
  }
}
