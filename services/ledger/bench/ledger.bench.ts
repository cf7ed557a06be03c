/**
 * The ledger's figures (npm run bench -w services/ledger), on the embedded database and, when
 * DATABASE_URL is set, on PostgreSQL too:
 *   appends per second with 50 concurrent writers over HTTP,
 *   append-to-checkpoint latency (an append is answered once its checkpoint is committed),
 *   inclusion-proof requests per second on a tree of LEDGER_BENCH_LEAVES leaves (default 1,000,000).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { Agent, request as httpRequest } from 'node:http'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { migrate, openDatabase } from '@svc/kit'
import { restartablePort, tempFolder } from '@svc/kit/testing'
import { leafHash } from '@svc/trust/merkle'
import { generateNoteKey, signerFromKey } from '@svc/trust/note'
import type { Kysely } from 'kysely'
import pino from 'pino'
import { Sequencer } from '../src/areas/log/sequencer.ts'
import type { LedgerTables } from '../src/db.ts'
import { newIssuer, signedReceipt, WRITER, writerEnv } from '../test/support/helpers.ts'

// node:http with keep-alive costs the load generator far less CPU than fetch, on a machine it shares with the ledger
const agent = new Agent({ keepAlive: true, maxSockets: 64 })
function post(url: string, body: unknown): Promise<number> {
  const payload = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/v1/receipts`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${WRITER}`,
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}
function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
      .on('error', reject)
      .end()
  })
}

const APPENDS = Number(process.env.LEDGER_BENCH_APPENDS ?? 20_000)
const LEAVES = Number(process.env.LEDGER_BENCH_LEAVES ?? 1_000_000)
// PGlite always; PostgreSQL too when DATABASE_URL names one. Each run below sets these two.
const SERVER_URL = process.env.DATABASE_URL
let databaseUrl: string | undefined
let backend = 'PGlite'
const main = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const migrations = fileURLToPath(new URL('../migrations', import.meta.url))

/** Where a bench ledger keeps its data: a new schema on PostgreSQL, or a new PGlite directory. */
function storageFor(label: string): { env: Record<string, string>; schema: string; dataDir?: string } {
  if (databaseUrl) {
    const schema = `bench_${label}_${randomBytes(4).toString('hex')}`
    return { env: { DATABASE_SCHEMA: schema }, schema }
  }
  const root = join(tempFolder(), 'data')
  return { env: { DATA_DIR: root }, schema: 'ledger', dataDir: join(root, 'ledger') }
}

async function launch(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await restartablePort()
  // LEDGER_BENCH_NODE_ARGS passes flags to the ledger process (e.g. --cpu-prof to profile it)
  const nodeArgs = process.env.LEDGER_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', main], {
    env: {
      ...process.env,
      ...writerEnv,
      ...env,
      DATABASE_URL: databaseUrl ?? '',
      LEDGER_PORT: String(port),
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 1200; i++) {
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { child, url }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('ledger did not start')
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

async function appends() {
  const storage = storageFor('append')
  const { child, url } = await launch(storage.env)
  const issuer = newIssuer()
  const receipts = Array.from({ length: APPENDS }, (_, i) => signedReceipt(issuer, `tsk_${i}`, { i }))
  await Promise.all(receipts.slice(0, 200).map((r) => post(url, r))) // warm-up
  const latencies: number[] = []
  let next = 200
  const started = performance.now()
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < receipts.length) {
        const r = receipts[next++]!
        const t = performance.now()
        const status = await post(url, r)
        if (status !== 201) throw new Error(`append answered ${status}`)
        latencies.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  console.log(
    `appends, 50 concurrent writers (${backend})      ${Math.round(latencies.length / seconds)}/s  (${latencies.length} in ${seconds.toFixed(1)} s)`,
  )
  console.log(
    `append → in a signed checkpoint (${backend})    p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms`,
  )
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
}

/** Loads a big tree through the real sequencer (in-process, large batches, no HTTP or signatures). */
async function bulkLoad(storage: ReturnType<typeof storageFor>) {
  const database = await openDatabase({
    url: databaseUrl,
    schema: storage.schema,
    dataDir: storage.dataDir,
  })
  await migrate(database, migrations)
  const origin = '127.0.0.1:bench'
  const sequencer = new Sequencer(database.db as Kysely<LedgerTables>, {
    origin,
    signer: signerFromKey(generateNoteKey(origin).signerKey),
    batchMax: 4096,
    batchWaitMs: 0,
    log: pino({ level: 'silent' }),
  })
  const started = performance.now()
  for (let done = 0; done < LEAVES;) {
    const count = Math.min(4096, LEAVES - done)
    await Promise.all(
      Array.from({ length: count }, (_, i) => {
        const entry = Buffer.from(`{"bench":${done + i}}`)
        return sequencer.submit({
          leaf_hash: Buffer.from(leafHash(entry)),
          entry,
          receipt_type: 'bench.leaf',
          issuer_did: 'did:key:bench',
          subject: `s${(done + i) % 1000}`,
          issued_at: new Date(),
          writer: 'bench',
        })
      }),
    )
    done += count
  }
  console.log(
    `bulk integration through the sequencer (${backend})  ${Math.round(LEAVES / ((performance.now() - started) / 1000))} leaves/s`,
  )
  await database.close()
}

async function proofs() {
  const storage = storageFor('proofs')
  await bulkLoad(storage)
  const { child, url } = await launch(storage.env)
  let count = 0
  const until = performance.now() + 10_000
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < until) {
        const index = Math.floor(Math.random() * LEAVES)
        const status = await get(`${url}/v1/proofs/inclusion?index=${index}`)
        if (status !== 200) throw new Error(`proof answered ${status}`)
        count++
      }
    }),
  )
  console.log(
    `inclusion proofs at ${LEAVES.toLocaleString('en')} leaves, 16 concurrent (${backend})  ${Math.round(count / 10)}/s`,
  )
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
  if (databaseUrl)
    await (await openDatabase({ url: databaseUrl, schema: storage.schema, dropSchemaOnClose: true })).close()
}

console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
)
for (const url of [undefined, ...(SERVER_URL ? [SERVER_URL] : [])]) {
  databaseUrl = url
  backend = url ? 'PostgreSQL' : 'PGlite'
  await appends()
  await proofs()
}
