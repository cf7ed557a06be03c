import { createHash } from 'node:crypto'
import type { PostgresPool, PostgresPoolClient } from 'kysely'
import type pg from 'pg'

/** Named statements kept per connection; beyond, new texts run unnamed until the next checkout. */
const KEPT_PER_CONNECTION = 200
/** Longer texts, or more parameters, run unnamed: generated lists (`in ($1, …)`, many rows) rarely repeat. */
const MAX_NAMED_TEXT = 8_000
const MAX_NAMED_PARAMETERS = 50
/** `select *`, `"t".*`, `returning *`: its result type changes when a column is added. */
const STAR = /(?:\bselect(?:\s+distinct)?|\breturning|,|\.)\s*\*/i

/** The client's own timeout: set off by `query_timeout`, later than the server's statement timeout. */
const isReadTimeout = (err: unknown) => err instanceof Error && err.message === 'Query read timeout'
const isStalePlan = (err: unknown) => (err as { code?: string } | undefined)?.code === '0A000'

interface Text {
  name: string
  star: boolean
}
/** What node-postgres records as prepared on a connection (by name); absent, nothing is named. */
type Parsed = Record<string, string | undefined>
interface Kept {
  /** Names prepared on this connection, least recently used first. */
  names: Set<string>
  /** Names whose plan PostgreSQL refused (0A000): run unnamed until deallocated. */
  stale: Set<string>
  generation: number
}

/**
 * The pool as Kysely sees it, with two rules:
 *
 * - a connection on which a query timed out is destroyed on release rather than reused: its query
 *   may still be pending on a silent socket, and every later query on it would wait behind it;
 * - with `prepared`, a query with parameters runs as a named statement (a hash of its text), so
 *   PostgreSQL parses and plans it once per connection rather than on every run.
 *
 * A table changed under a kept statement (a migration, here or on another instance) makes
 * PostgreSQL refuse the statement's plan (0A000) when its result type changed. Outside a
 * transaction the statement is prepared again and run again; inside one the transaction is lost,
 * so there a statement whose columns come from `*` is never named (an added column changes its
 * result type), and after any 0A000, or `schemaChanged()`, every connection drops its statements
 * at its next checkout.
 */
export function pooled(pool: pg.Pool, prepared: boolean): PostgresPool & { schemaChanged(): void } {
  const texts = new Map<string, Text>()
  const kept = new WeakMap<pg.PoolClient, Kept>()
  let generation = 0

  const textOf = (sql: string): Text => {
    let text = texts.get(sql)
    if (!text) {
      if (texts.size >= 5_000) texts.clear()
      const name = `k${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`
      text = { name, star: STAR.test(sql) }
      texts.set(sql, text)
    }
    return text
  }

  const parsedOf = (client: pg.PoolClient) =>
    (client as unknown as { connection?: { parsedStatements?: Parsed } }).connection?.parsedStatements

  /** Deallocates what must go before this checkout names anything; false when that failed. */
  async function tidy(client: pg.PoolClient, state: Kept, parsed: Parsed): Promise<boolean> {
    if (client.getTransactionStatus() !== 'I') return true
    if (state.generation !== generation) {
      if (state.names.size || state.stale.size) {
        await client.query('deallocate all')
        for (const name of Object.keys(parsed)) delete parsed[name]
        state.names.clear()
        state.stale.clear()
      }
      state.generation = generation
      return true
    }
    const victims = [...state.stale]
    if (state.names.size >= KEPT_PER_CONNECTION)
      victims.push(...[...state.names].slice(0, KEPT_PER_CONNECTION / 4))
    const held = victims.filter((name) => parsed[name] !== undefined)
    if (held.length) await client.query(held.map((name) => `deallocate "${name}"`).join('; '))
    for (const name of victims) {
      delete parsed[name]
      state.names.delete(name)
      state.stale.delete(name)
    }
    return true
  }

  function nameFor(client: pg.PoolClient, state: Kept, sql: string, values: unknown[]) {
    if (values.length === 0 || values.length > MAX_NAMED_PARAMETERS || sql.length > MAX_NAMED_TEXT) return
    const text = textOf(sql)
    if (state.stale.has(text.name)) return
    if (text.star && client.getTransactionStatus() !== 'I') return
    if (state.names.delete(text.name)) {
      state.names.add(text.name)
      return text.name
    }
    if (state.names.size >= KEPT_PER_CONNECTION) return
    state.names.add(text.name)
    return text.name
  }

  async function run(
    client: pg.PoolClient,
    state: Kept,
    parsed: Parsed,
    sql: string,
    values: unknown[],
    retry = true,
  ): Promise<pg.QueryResult> {
    const name = nameFor(client, state, sql, values)
    if (!name) return client.query(sql, values)
    const wasPrepared = parsed[name] !== undefined
    try {
      return await client.query({ name, text: sql, values })
    } catch (err) {
      if (parsed[name] === undefined) state.names.delete(name)
      if (!(retry && wasPrepared && isStalePlan(err))) throw err
      // the schema changed under this statement: every connection prepares its statements again
      generation++
      state.names.delete(name)
      state.stale.add(name)
      if (client.getTransactionStatus() !== 'I') throw err
      await tidy(client, state, parsed)
      return run(client, state, parsed, sql, values, false)
    }
  }

  return {
    async connect() {
      const client = await pool.connect()
      let broken: Error | undefined
      const parsed = prepared ? parsedOf(client) : undefined
      let state = kept.get(client)
      if (parsed && !state) kept.set(client, (state = { names: new Set(), stale: new Set(), generation }))
      let naming = Boolean(parsed && state)
      if (naming) {
        // a connection whose statements cannot be dropped is not reused, and names nothing meanwhile
        await tidy(client, state!, parsed!).catch((err: Error) => {
          broken = err
          naming = false
        })
      }
      const guarded = {
        query: (sql: string, values: unknown[]) =>
          (naming ? run(client, state!, parsed!, sql, values) : client.query(sql, values)).catch(
            (err: unknown) => {
              if (isReadTimeout(err)) broken = err as Error
              throw err
            },
          ),
        release: () => client.release(broken),
      }
      return guarded as unknown as PostgresPoolClient
    },
    end: () => pool.end(),
    schemaChanged() {
      generation++
    },
  }
}
