/**
 * A count of the SQL statements a process runs, by their text, for the benchmarks' "statements
 * per task" (never on in production). With SVC_SQL_TALLY=<folder>, every statement Kysely runs is
 * counted, transactions' `begin` and `commit` included; with SVC_SQL_TALLY_STACK=1 each count is
 * also keyed by the area code that built the statement. SIGUSR2 writes the counts since the last
 * signal to <folder>/<pid>.json and starts again.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KyselyPlugin, LogEvent, RootOperationNode } from 'kysely'

const folder = process.env.SVC_SQL_TALLY
const withCallers = process.env.SVC_SQL_TALLY_STACK === '1'
const counts = new Map<string, number>()
const built = new WeakMap<RootOperationNode, string>()
let installed = false

/** Kysely's `log` and `plugins` options that count; none when SVC_SQL_TALLY is unset. */
export function sqlTally(): { log?: (event: LogEvent) => void; plugins?: KyselyPlugin[] } {
  if (!folder) return {}
  if (!installed) {
    installed = true
    process.on('SIGUSR2', () => {
      writeFileSync(join(folder, `${process.pid}.json`), JSON.stringify(Object.fromEntries(counts)))
      counts.clear()
    })
  }
  const log = (event: LogEvent) => {
    const text = event.query.sql
    const by = built.get(event.query.query)
    const key = by ? `${text}\u0000${by}` : text
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  if (!withCallers) return { log }
  // a query is built synchronously in its caller's stack (the log runs after an await, without it)
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      built.set(node, callers())
      return node
    },
    transformResult: async ({ result }) => result,
  }
  return { log, plugins: [plugin] }
}

function callers(): string {
  return (new Error().stack ?? '')
    .split('\n')
    .filter((f) => /src\/areas\//.test(f) && !/node_modules/.test(f))
    .slice(0, 4)
    .map((f) => f.replace(/^.*src\/areas\//, '').replace(/\)$/, ''))
    .join(' < ')
}
