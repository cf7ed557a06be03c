/**
 * CPU per SQL statement through each layer of the kit's database (issue 34): raw PGlite, the kit's
 * dialect with SQL already compiled, Kysely's builder on top; on PGlite in memory, on disk, and on
 * PostgreSQL when DATABASE_URL is set. CPU is this process's user + system time
 * (process.cpuUsage), so it stays meaningful on a loaded machine where wall rates do not.
 * STATEMENT_BENCH_N sets the statements per measure (default 3000); STATEMENT_BENCH_ONLY=<text>
 * keeps the measures whose label contains it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CompiledQuery, type Kysely, sql } from 'kysely'
import { type PGlite, protocol } from '@electric-sql/pglite'
import { openDatabase } from '../packages/kit/src/db/database.ts'
import { createPGlite } from '../packages/kit/src/db/pglite.ts'
import { type BenchRows, CREATE_BENCH_ROWS, ROWS, transactionOfFour } from './bench-rows.ts'

const N = Number(process.env.STATEMENT_BENCH_N ?? 3000)
const only = process.env.STATEMENT_BENCH_ONLY

/** Runs `once` n times in sequence (the statements of one holder), prints µs of CPU per statement. */
async function measure(label: string, statementsPerCall: number, once: (i: number) => Promise<unknown>) {
  if (only && !label.includes(only)) return
  const calls = Math.ceil(N / statementsPerCall)
  for (let i = 0; i < Math.min(200, calls); i++) await once(i) // warm-up: plans, JIT
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let i = 0; i < calls; i++) await once(i)
  const used = process.cpuUsage(cpu)
  const ms = performance.now() - started
  const perStatement = (used.user + used.system) / (calls * statementsPerCall)
  console.log(
    `${label.padEnd(58)} ${perStatement.toFixed(1).padStart(7)} µs CPU/statement  (wall ${((ms * 1000) / (calls * statementsPerCall)).toFixed(1)} µs)`,
  )
}

const pick = (i: number) => (i % ROWS) + 1
let nextId = ROWS

async function rawPGlite(pglite: PGlite, where: string) {
  await pglite.exec(`${CREATE_BENCH_ROWS}; create table if not exists bench_raw_marker ()`)
  await measure(`${where}: raw query(), select by key`, 1, (i) =>
    pglite.query('select * from bench_rows where id = $1', [pick(i)]),
  )
  // a prepared statement run by one bind/execute/sync call, rows left unparsed: PGlite's floor
  await pglite.query('select 1') // leaves the connection idle
  const { messages } = await pglite.execProtocol(
    Buffer.concat([
      protocol.serialize.parse({ name: 'raw_sel', text: 'select * from bench_rows where id = $1' }),
      protocol.serialize.sync(),
    ]),
  )
  if (messages.some((m) => m.name === 'error')) throw new Error('prepare failed')
  await measure(`${where}: raw execProtocol, prepared select by key`, 1, (i) =>
    pglite.execProtocol(
      Buffer.concat([
        protocol.serialize.bind({ statement: 'raw_sel', values: [String(pick(i))] }),
        protocol.serialize.execute({}),
        protocol.serialize.sync(),
      ]),
      { syncToFs: false },
    ),
  )
}

async function throughKit(db: Kysely<BenchRows>, where: string) {
  await measure(`${where}: dialect, compiled select by key`, 1, (i) =>
    db.executeQuery(CompiledQuery.raw('select * from bench_rows where id = $1', [pick(i)])),
  )
  await measure(`${where}: kysely builder, select by key`, 1, (i) =>
    db.selectFrom('bench_rows').selectAll().where('id', '=', pick(i)).executeTakeFirst(),
  )
  await measure(`${where}: kysely builder, insert`, 1, () => {
    const id = ++nextId
    return db
      .insertInto('bench_rows')
      .values({ id, owner: `o${id}`, amount: id, body: JSON.stringify({ id }) })
      .execute()
  })
  await measure(`${where}: sql template, update`, 1, (i) =>
    sql`update bench_rows set amount = amount + 1 where id = ${pick(i)}`.execute(db),
  )
  await measure(`${where}: transaction of 4 + begin/commit`, 6, (i) =>
    transactionOfFour(db, pick(i), ++nextId),
  )
}

async function onKit(where: string, url: string | undefined, dataDir: string | undefined) {
  const database = await openDatabase<BenchRows>({
    url,
    dataDir,
    schema: `bench_${process.pid}`,
    dropSchemaOnClose: true,
  })
  try {
    await sql.raw(CREATE_BENCH_ROWS).execute(database.db)
    await throughKit(database.db, where)
  } finally {
    await database.close()
  }
}

console.log(`${N} statements per measure, load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`)
if (!only || only.includes('raw')) {
  const raw = await createPGlite(undefined)
  await rawPGlite(raw, 'pglite memory')
  await raw.close()
}
await onKit('pglite memory', undefined, undefined)
const dir = mkdtempSync(join(tmpdir(), 'statement-bench-'))
try {
  await onKit('pglite disk', undefined, join(dir, 'data'))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
if (process.env.DATABASE_URL) await onKit('postgres', process.env.DATABASE_URL, undefined)
