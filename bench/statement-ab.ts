/**
 * `node --import tsx bench/statement-ab.ts <other worktree>`: CPU per statement of this
 * worktree's PGlite dialect against another's (a worktree of main), in one process, in short
 * alternating blocks, so that a shared machine's load weighs on both sides alike. Each side has
 * its own on-disk PGlite; the shapes are those of bench/statement.bench.ts. AB_ROUNDS (default 12)
 * blocks of 300 statements per side and shape.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { type Dialect, Kysely } from 'kysely'
import type { PGlite } from '@electric-sql/pglite'
import { createPGlite } from '../packages/kit/src/db/pglite.ts'
import { PGliteDialect } from '../packages/kit/src/db/pglite-dialect.ts'
import { type BenchRows, CREATE_BENCH_ROWS, ROWS, transactionOfFour } from './bench-rows.ts'

const other = process.argv[2]
if (!other) throw new Error('usage: bench/statement-ab.ts <path of the worktree to compare with>')
const base = (await import(resolve(other, 'packages/kit/src/db/pglite-dialect.ts'))) as {
  PGliteDialect: new (pglite: PGlite) => Dialect
}
const ROUNDS = Number(process.env.AB_ROUNDS ?? 12)
const BLOCK = 300
const dir = mkdtempSync(join(tmpdir(), 'statement-ab-'))

async function open(side: string, Dialect: new (pglite: PGlite) => Dialect) {
  const pglite = await createPGlite(join(dir, side))
  await pglite.exec(CREATE_BENCH_ROWS)
  return new Kysely<BenchRows>({ dialect: new Dialect(pglite) })
}
const sides = { base: await open('base', base.PGliteDialect), this: await open('this', PGliteDialect) }
type Db = (typeof sides)['base']
let nextId = ROWS
const key = (i: number) => (i % ROWS) + 1

const shapes: Record<string, [statements: number, once: (db: Db, i: number) => Promise<unknown>]> = {
  'select by key': [
    1,
    (db, i) => db.selectFrom('bench_rows').selectAll().where('id', '=', key(i)).executeTakeFirst(),
  ],
  insert: [
    1,
    (db) => {
      const id = ++nextId
      return db
        .insertInto('bench_rows')
        .values({ id, owner: `o${id}`, amount: id, body: '{}' })
        .execute()
    },
  ],
  'transaction of 4 + begin/commit': [6, (db, i) => transactionOfFour(db, key(i), ++nextId)],
}

try {
  for (const [shape, [statements, once]] of Object.entries(shapes)) {
    const cpu = { base: 0, this: 0 }
    const done = { base: 0, this: 0 }
    for (const side of ['base', 'this'] as const) for (let i = 0; i < 300; i++) await once(sides[side], i)
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 ? (['base', 'this'] as const) : (['this', 'base'] as const)) {
        const calls = Math.ceil(BLOCK / statements)
        const before = process.cpuUsage()
        for (let i = 0; i < calls; i++) await once(sides[side], i)
        const used = process.cpuUsage(before)
        cpu[side] += used.user + used.system
        done[side] += calls * statements
      }
    }
    const a = cpu.base / done.base
    const b = cpu.this / done.this
    console.log(
      `${shape.padEnd(34)} base ${a.toFixed(1).padStart(6)} µs, this ${b.toFixed(1).padStart(6)} µs CPU/statement (${((100 * (b - a)) / a).toFixed(0)} %)`,
    )
  }
} finally {
  await Promise.all([sides.base.destroy(), sides.this.destroy()])
  rmSync(dir, { recursive: true, force: true })
}
