/**
 * Money conservation, the long run (npm run bench -- money): the property of
 * test/money-conservation.test.ts over longer random sequences of client, provider and operator
 * actions, with a new seed each run (or RENTAL_BENCH_MONEY_SEED to replay one), on PGlite or, with
 * DATABASE_URL set, PostgreSQL. Counts: RENTAL_BENCH_MONEY_RUNS sequences (10) of
 * RENTAL_BENCH_MONEY_STEPS actions (30). It prints the seed, the actions run and the time; a broken
 * invariant fails it with the seed and the last actions.
 */
import { performance } from 'node:perf_hooks'
import { closeWorld, MONEY_ACTIONS, moneyWorld, runMoneyProperty } from '../test/money/money-model.ts'

process.env.NODE_ENV ??= 'test'
const seed = Number(process.env.RENTAL_BENCH_MONEY_SEED ?? Date.now() % 2 ** 31)
const runs = Number(process.env.RENTAL_BENCH_MONEY_RUNS ?? 10)
const steps = Number(process.env.RENTAL_BENCH_MONEY_STEPS ?? 30)

console.log(`money conservation: seed ${seed}, ${runs} sequences of ${steps} actions`)
const world = await moneyWorld()
const start = performance.now()
try {
  const log = await runMoneyProperty(world, { seed, runs, steps })
  const seconds = (performance.now() - start) / 1000
  const counts = new Map<string, number>()
  for (const line of log) {
    const name = line.slice(0, line.indexOf(':'))
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  console.log(`${log.length} actions in ${seconds.toFixed(1)} s, the invariants held after each`)
  for (const name of Object.keys(MONEY_ACTIONS)) console.log(`  ${name.padEnd(14)} ${counts.get(name) ?? 0}`)
} catch (err) {
  console.error(`seed ${seed}: ${(err as Error).message}`)
  process.exitCode = 1
} finally {
  await closeWorld(world)
}
