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
  /** The columns' names and type OIDs from the statement's description: a bound portal's are the same. */
  names: string[]
  types: number[]
}

const EXECUTE_SYNC = Buffer.concat([protocol.serialize.execute({}), protocol.serialize.sync()])

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
      const messages = await this.#call(protocol.serialize.query(query.sql))
      const failure = messages.find((m) => m.name === 'error')
      if (failure) throw failure
      const last = parse.parseResults(messages, this.pglite.parsers).at(-1)
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
    return this.#result<R>(statement, messages)
  }

  /**
   * One call into PGlite. The driver's mutex already lends the database to one holder at a time
   * and every message ends in a sync, so PGlite's own queue (`runExclusive`) would only add a
   * lock per call; `syncToFs` is a no-op on PGlite's Node and memory file systems (PostgreSQL's
   * writes reach the data directory's files during the call), so skipping it changes no durability.
   */
  async #call(message: Uint8Array) {
    const { messages } = await this.pglite.execProtocol(message, { throwOnError: false, syncToFs: false })
    return messages
  }

  /** The rows of a prepared statement's run, by the names and types its description gave. */
  #result<R>(statement: Prepared, messages: BackendMessage[]): QueryResult<R> {
    const rows: Record<string, unknown>[] = []
    let affectedRows = 0
    const parsers = this.pglite.parsers
    const { names, types } = statement
    for (const message of messages) {
      if (message.name === 'dataRow') {
        const fields = (message as unknown as { fields: (string | null)[] }).fields
        const row: Record<string, unknown> = {}
        for (let i = 0; i < fields.length; i++) {
          const text = fields[i]!
          const parser = text === null ? undefined : parsers[types[i]!]
          row[names[i]!] = parser ? parser(text, types[i]!) : text
        }
        rows.push(row)
      } else if (message.name === 'commandComplete') {
        const tag = (message as unknown as { text: string }).text
        if (/^(INSERT|UPDATE|DELETE|COPY|MERGE) /.test(tag))
          affectedRows += Number(tag.slice(tag.lastIndexOf(' ') + 1))
      }
    }
    return toKysely<R>(rows, affectedRows)
  }

  async #statement(sql: string) {
    const statement = this.#statements.get(sql) ?? (await this.#prepare(sql))
    // most recently used last, so the first entry is the one to close when the map is full
    this.#statements.delete(sql)
    this.#statements.set(sql, statement)
    return statement
  }

  #run(statement: Prepared, parameters: readonly unknown[]) {
    const values = parameters.map((value, i) => {
      if (value === null || value === undefined) return null
      const serialize = this.pglite.serializers[statement.paramTypes[i]!]
      return serialize ? serialize(value) : String(value)
    })
    const bind = protocol.serialize.bind({ statement: statement.name, values })
    const message = new Uint8Array(bind.length + EXECUTE_SYNC.length)
    message.set(bind)
    message.set(EXECUTE_SYNC, bind.length)
    return this.#call(message)
  }

  async #prepare(sql: string): Promise<Prepared> {
    const name = `kit_${++this.#counter}`
    const messages = await this.#call(
      Buffer.concat([
        protocol.serialize.parse({ name, text: sql }),
        protocol.serialize.describe({ type: 'S', name }),
        protocol.serialize.sync(),
      ]),
    )
    const failure = messages.find((m) => m.name === 'error')
    if (failure) throw failure
    const description = messages.find((m) => m.name === 'rowDescription') as
      { fields: { name: string; dataTypeID: number }[] } | undefined
    const statement: Prepared = {
      name,
      paramTypes: parse.parseDescribeStatementResults(messages),
      names: description?.fields.map((f) => f.name) ?? [],
      types: description?.fields.map((f) => f.dataTypeID) ?? [],
    }
    if (this.#statements.size >= STATEMENTS_KEPT) await this.#close(this.#statements.keys().next().value!)
    return statement
  }

  /** Forgets a statement and closes it; a close refused (in an aborted transaction) leaves it unused. */
  async #close(sql: string) {
    const statement = this.#statements.get(sql)
    if (!statement) return
    this.#statements.delete(sql)
    await this.#call(
      Buffer.concat([
        protocol.serialize.close({ type: 'S', name: statement.name }),
        protocol.serialize.sync(),
      ]),
    )
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
