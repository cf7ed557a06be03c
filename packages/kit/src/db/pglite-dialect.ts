import { parse, type PGlite, protocol } from '@electric-sql/pglite'
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
/** Prepared statements kept per database; the least recently used one is closed beyond this. */
const STATEMENTS_KEPT = 500

type BackendMessage = Awaited<ReturnType<PGlite['execProtocol']>>['messages'][number]
interface Prepared {
  name: string
  paramTypes: number[]
  /** The statement's row description, when it returns rows: a bound portal's is the same. */
  rows: BackendMessage | undefined
}

/**
 * Kysely over PGlite. PGlite is a single connection, so the driver lends it to one holder at a
 * time: a transaction keeps it from BEGIN to COMMIT and no other query can slip in between.
 * Queries without parameters go through PGlite's simple protocol, which runs multi-statement
 * scripts (migrations, pg-boss's installer) the way PostgreSQL's simple protocol does.
 * Queries with parameters are prepared once per SQL text (a named statement, kept while used)
 * and then each run is one call into the database (bind, execute, sync): PGlite's own `query()`
 * parses, plans and describes the statement again on every call, in six calls.
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
  readonly #statements = new Map<string, Prepared>()
  #counter = 0

  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query.parameters.length === 0) {
      const results = await this.pglite.exec(query.sql)
      const last = results.at(-1)
      return toKysely<R>(last?.rows ?? [], last?.affectedRows)
    }
    let statement = await this.#statement(query.sql)
    let messages = await this.#run(statement, query.parameters)
    let failure = messages.find((m) => m.name === 'error')
    // a table changed under a kept statement: PostgreSQL refuses its plan (0A000), so it is
    // prepared again, and run again when no transaction was open (an open one is aborted by now)
    if (failure && (failure as { code?: string }).code === '0A000') {
      await this.#close(query.sql)
      const idle = messages.some(
        (m) => m.name === 'readyForQuery' && (m as { status?: string }).status === 'I',
      )
      if (idle) {
        statement = await this.#statement(query.sql)
        messages = await this.#run(statement, query.parameters)
        failure = messages.find((m) => m.name === 'error')
      }
    }
    if (failure) throw failure
    const [result] = parse.parseResults(
      statement.rows ? [statement.rows, ...messages] : messages,
      this.pglite.parsers,
    )
    return toKysely<R>(result?.rows ?? [], result?.affectedRows)
  }

  async #statement(sql: string) {
    const statement = this.#statements.get(sql) ?? (await this.#prepare(sql))
    // most recently used last, so the first entry is the one to close when the map is full
    this.#statements.delete(sql)
    this.#statements.set(sql, statement)
    return statement
  }

  async #run(statement: Prepared, parameters: readonly unknown[]) {
    const values = parameters.map((value, i) => {
      if (value === null || value === undefined) return null
      const serialize = this.pglite.serializers[statement.paramTypes[i]!]
      return serialize ? serialize(value) : String(value)
    })
    const message = concat([
      protocol.serialize.bind({ statement: statement.name, values }),
      protocol.serialize.execute({}),
      protocol.serialize.sync(),
    ])
    const { messages } = await this.pglite.runExclusive(() =>
      this.pglite.execProtocol(message, { throwOnError: false }),
    )
    return messages
  }

  async #prepare(sql: string): Promise<Prepared> {
    const name = `kit_${++this.#counter}`
    const { messages } = await this.pglite.runExclusive(() =>
      this.pglite.execProtocol(
        concat([
          protocol.serialize.parse({ name, text: sql }),
          protocol.serialize.describe({ type: 'S', name }),
          protocol.serialize.sync(),
        ]),
      ),
    )
    const statement: Prepared = {
      name,
      paramTypes: parse.parseDescribeStatementResults(messages),
      rows: messages.find((m) => m.name === 'rowDescription'),
    }
    if (this.#statements.size >= STATEMENTS_KEPT) await this.#close(this.#statements.keys().next().value!)
    return statement
  }

  /** Forgets a statement and closes it; a close refused (in an aborted transaction) leaves it unused. */
  async #close(sql: string) {
    const statement = this.#statements.get(sql)
    if (!statement) return
    this.#statements.delete(sql)
    const message = concat([
      protocol.serialize.close({ type: 'S', name: statement.name }),
      protocol.serialize.sync(),
    ])
    await this.pglite.runExclusive(() => this.pglite.execProtocol(message, { throwOnError: false }))
  }

  // eslint-disable-next-line require-yield -- streaming is not offered on the embedded database
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on the embedded database')
  }
}

function concat(parts: Uint8Array[]) {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

function toKysely<R>(rows: unknown[], affectedRows: number | undefined): QueryResult<R> {
  return {
    rows: rows as R[],
    ...(affectedRows !== undefined ? { numAffectedRows: BigInt(affectedRows) } : {}),
  }
}
