import type { PGlite } from '@electric-sql/pglite'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'
import { Mutex } from './mutex.ts'

const ACQUIRE_TIMEOUT_MS = 30_000

/**
 * Kysely over PGlite. PGlite is a single connection, so the driver lends it to one holder at a
 * time: a transaction keeps it from BEGIN to COMMIT and no other query can slip in between.
 * Queries without parameters go through PGlite's simple protocol, which runs multi-statement
 * scripts (migrations, pg-boss's installer) the way PostgreSQL's simple protocol does.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}
  createAdapter() {
    return new PostgresAdapter()
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite)
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler()
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's introspector is untyped by design
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db)
  }
}

class PGliteDriver implements Driver {
  readonly #mutex = new Mutex()
  readonly #connection: PGliteConnection

  constructor(private readonly pglite: PGlite) {
    this.#connection = new PGliteConnection(pglite)
  }
  async init() {}
  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock(
      ACQUIRE_TIMEOUT_MS,
      () =>
        new Error(
          `the embedded database stayed busy for ${ACQUIRE_TIMEOUT_MS / 1000}s: is a query using the database handle inside an open transaction?`,
        ),
    )
    return this.#connection
  }
  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : ''
    await connection.executeQuery(CompiledQuery.raw(`begin${level}`))
  }
  async commitTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }
  async rollbackTransaction(connection: DatabaseConnection) {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }
  async releaseConnection() {
    this.#mutex.unlock()
  }
  async destroy() {
    if (!this.pglite.closed) await this.pglite.close()
  }
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query.parameters.length === 0) {
      const results = await this.pglite.exec(query.sql)
      const last = results.at(-1)
      return toKysely<R>(last?.rows ?? [], last?.affectedRows)
    }
    const result = await this.pglite.query<R>(query.sql, query.parameters as unknown[])
    return toKysely<R>(result.rows, result.affectedRows)
  }

  // eslint-disable-next-line require-yield -- streaming is not offered on the embedded database
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on the embedded database')
  }
}

function toKysely<R>(rows: unknown[], affectedRows: number | undefined): QueryResult<R> {
  return {
    rows: rows as R[],
    ...(affectedRows !== undefined ? { numAffectedRows: BigInt(affectedRows) } : {}),
  }
}
