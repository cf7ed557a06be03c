/**
 * The kit's floor: HTTP round trips through the full middleware (request id, metrics, error
 * handler) and database writes, on whichever backend DATABASE_URL selects.
 */
import { sql } from 'kysely'
import { startService } from '../packages/kit/src/service.ts'
import { freshDatabase } from '../packages/kit/src/testing.ts'
import { ledger } from '../services/ledger/src/app.ts'

async function measure(
  label: string,
  count: number,
  concurrency: number,
  once: (i: number) => Promise<unknown>,
) {
  const started = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await once(next++)
    }),
  )
  const seconds = (performance.now() - started) / 1000
  console.log(
    `${label.padEnd(48)} ${String(Math.round(count / seconds)).padStart(7)}/s  (${count} in ${seconds.toFixed(2)} s)`,
  )
}

const backend = process.env.DATABASE_URL ? 'postgres' : 'pglite'
const service = await startService(ledger, { ...process.env, LOG_LEVEL: 'silent' }, { fresh: true })
await measure('GET /healthz, 8 concurrent', 5000, 8, () =>
  fetch(`${service.url}/healthz`).then((r) => r.text()),
)
await measure(`GET /readyz (db ping on ${backend}), 8 concurrent`, 3000, 8, () =>
  fetch(`${service.url}/readyz`).then((r) => r.text()),
)
await measure('GET unknown route (404 path), 8 concurrent', 5000, 8, () =>
  fetch(`${service.url}/nope`).then((r) => r.text()),
)
await service.close()

const database = await freshDatabase('bench')
await sql`create table bench_rows (id int8 primary key, body jsonb not null)`.execute(database.db)
await measure(`insert, one transaction each (${backend}), 4 concurrent`, 2000, 4, (i) =>
  database.db
    .transaction()
    .execute((trx) => sql`insert into bench_rows values (${i}, ${JSON.stringify({ i })})`.execute(trx)),
)
await measure(`select by primary key (${backend}), 4 concurrent`, 5000, 4, (i) =>
  sql`select body from bench_rows where id = ${i % 2000}`.execute(database.db),
)
await database.close()
