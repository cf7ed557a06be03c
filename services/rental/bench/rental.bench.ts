/**
 * The rental's figures (npm run bench -- rental), in the layout `npm start` runs: the idp, ledger,
 * agents and rental each in its own process (bundled with esbuild), on PGlite and, when
 * DATABASE_URL is set, on PostgreSQL too. This process is the load generator: node:http with
 * keep-alive, RENTAL_BENCH_CONCURRENCY clients (16), each with its own engagement, as clients are.
 *   sync tasks per second through POST /api/tasks (the built-in summariser over A2A), p50/p99/p99.9,
 *   each service's CPU time per task (from /proc), the same through the rental's A2A surface
 *   (SendMessage with an agt_ token), hire → sign → task → receipt on the ledger (p50/p99), and the
 *   delay from a task's answer to its receipt being on the ledger (p50/p99).
 * Beside them, bench/floor (the same hops and rows without the business) with ours / floor, the
 * same 16 clients all on ONE engagement, and each process's CPU at rest (RENTAL_BENCH_REST_S, 10, after RENTAL_BENCH_SETTLE_S, 3).
 * Counts: RENTAL_BENCH_TASKS (1,000 per measure), RENTAL_BENCH_PATHS (50).
 * RENTAL_BENCH_NODE_ARGS passes flags to every service (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 * RENTAL_BENCH_BACKEND=postgres (or pglite) measures one backend only.
 * RENTAL_BENCH_SQL=1 counts the rental's SQL statements over the console measure (kit db/tally.ts)
 * and prints them per task, the most frequent first.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { cpus, loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { CookieJar, tempFolder } from '@svc/kit/testing'
import { b64uEncode } from '@svc/trust/base64url'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { generateEd25519, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { type Floor, startFloor } from '../../../bench/floor/start.ts'
import {
  cpuSeconds,
  type Name,
  postgresCpuSeconds,
  quantile,
  SERVICES,
  send,
  type Stack,
  startStack,
} from './processes.ts'

const TASKS = Number(process.env.RENTAL_BENCH_TASKS ?? 1000)
const CONCURRENCY = Number(process.env.RENTAL_BENCH_CONCURRENCY ?? 16)
const PATHS = Number(process.env.RENTAL_BENCH_PATHS ?? 50)
const REST_S = Number(process.env.RENTAL_BENCH_REST_S ?? 10)
/** Seconds between start and the rest measure: boot's own work (migrations' follow-ups, first sweeps) is over by then. */
const SETTLE_S = Number(process.env.RENTAL_BENCH_SETTLE_S ?? 3)
const ADMIN = `bench-admin-${randomBytes(12).toString('hex')}`
const nodeArgs = process.env.RENTAL_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []
const tallyFolder = process.env.RENTAL_BENCH_SQL === '1' ? tempFolder() : undefined
const TEXT =
  'The ledger records every receipt the platform issues. Each receipt is a leaf in a Merkle tree. Witnesses cosign the checkpoints, so a log that forks is caught. Clients sign their escrows with their own keys. The weather was hot.'

interface Signed {
  body: Record<string, unknown>
  hash: string
}

/** The console as a browser that signed in at the rental through the idp (the demo account). */
async function signIn(stack: Stack) {
  const { idp, rental } = stack.services
  const jar = new CookieJar()
  let location = (await jar.fetch(`${rental.url}/auth/login`)).headers.get('location')!
  for (let hop = 0; hop < 8 && !location.startsWith(`${rental.url}/auth/callback`); hop++) {
    const target = new URL(location, idp.url)
    const res = await jar.fetch(target.toString())
    if (res.status === 200 && target.pathname === '/ui/login') {
      const page = await res.text()
      const posted = await jar.fetch(`${idp.url}/ui/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          email: 'demo@svc.local',
          password: stack.demoPassword,
          csrf: /name="csrf" value="([^"]+)"/.exec(page)![1]!,
          return_to: /name="return_to" value="([^"]+)"/.exec(page)![1]!.replaceAll('&amp;', '&'),
        }).toString(),
      })
      location = posted.headers.get('location')!
    } else location = res.headers.get('location')!
  }
  if ((await jar.fetch(location)).status !== 302) throw new Error('the rental callback failed')
  const me = (await (await jar.fetch(`${rental.url}/api/me`)).json()) as { csrf_token: string }
  return { cookie: jar.header(), csrf: me.csrf_token }
}

const verbose = process.env.RENTAL_BENCH_VERBOSE === '1'
const step = (what: string) => {
  if (verbose) console.error(`[bench] ${new Date().toISOString()} ${what}`)
}

interface Timed<N extends string = Name> {
  perSecond: number
  latencies: number[]
  cpuMs: Record<N, number>
  generatorCpuMs: number
  /** On PostgreSQL: the local server's processes' CPU per task (undefined on PGlite). */
  postgresCpuMs?: number
}

/** Set while the stack runs on PostgreSQL: `timed` then counts the local server's CPU too. */
let onPostgres = false

const pidsOf = (stack: Stack) =>
  Object.fromEntries(SERVICES.map((n) => [n, stack.services[n].pid])) as Record<Name, number>

/** `count` jobs over CONCURRENCY workers: the rate, each latency, and each process's CPU per job. */
async function timed<N extends string = Name>(
  pids: Record<N, number>,
  count: number,
  job: (worker: number) => Promise<void>,
): Promise<Timed<N>> {
  const names = Object.keys(pids) as N[]
  const before = names.map((n) => cpuSeconds(pids[n]))
  const postgresBefore = onPostgres ? postgresCpuSeconds() : Number.NaN
  const own = process.cpuUsage()
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next++ < count) {
        const t = performance.now()
        await job(worker)
        latencies.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(own)
  latencies.sort((a, b) => a - b)
  return {
    perSecond: count / seconds,
    latencies,
    cpuMs: Object.fromEntries(
      names.map((n, i) => [n, ((cpuSeconds(pids[n]) - before[i]!) * 1000) / count]),
    ) as Record<N, number>,
    generatorCpuMs: (used.user + used.system) / 1000 / count,
    ...(onPostgres ? { postgresCpuMs: ((postgresCpuSeconds() - postgresBefore) * 1000) / count } : {}),
  }
}

async function measure(stack: Stack, floor: Floor, backend: string) {
  const { rental } = stack.services
  const session = await signIn(stack)
  step('signed in')
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await send(`${rental.url}${path}`, {
      method,
      headers: {
        cookie: session.cookie,
        'x-csrf-token': session.csrf,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body}`)
    return JSON.parse(res.body) as T
  }
  let agentDid = ''
  for (let i = 0; i < 300 && !agentDid; i++) {
    const { jobs } = await call<{ jobs: Array<{ id: string; agents: Array<{ did: string }> }> }>(
      'GET',
      '/api/jobs',
    )
    agentDid = jobs.find((j) => j.id === 'job_summary')?.agents[0]?.did ?? ''
    if (!agentDid) await new Promise((r) => setTimeout(r, 100))
  }
  if (!agentDid) throw new Error('the catalogue has no summariser')
  const key = generateEd25519()
  const clientDid = didKeyFromEd25519(key.publicKey)
  const sign = (body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
  const hireAndSign = async () => {
    const hired = await call<{ engagement: { id: string }; package: { sla: Signed; escrows: Signed[] } }>(
      'POST',
      '/api/engagements',
      { job_id: 'job_summary', agent_did: agentDid, client_did: clientDid },
    )
    await call('POST', `/api/engagements/${hired.engagement.id}/signatures`, {
      sla_signature: sign(hired.package.sla.body),
      escrow_signatures: hired.package.escrows.map((e) => ({ escrow_hash: e.hash, signature: sign(e.body) })),
    })
    return hired.engagement.id
  }
  const runTask = async (engagementId: string) => {
    const { task } = await call<{ task: { id: string; state: string } }>('POST', '/api/tasks', {
      engagement_id: engagementId,
      text: TEXT,
    })
    if (task.state !== 'completed') throw new Error(`task ${task.id} is ${task.state}`)
    return task.id
  }
  const { token } = await call<{ token: string }>('POST', '/api/tokens', { label: 'bench' })
  let rpcId = 0
  const a2aTask = async (engagementId: string) => {
    const res = await send(`${rental.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++rpcId,
        method: 'SendMessage',
        params: {
          message: {
            messageId: randomBytes(8).toString('hex'),
            role: 'ROLE_USER',
            parts: [{ text: TEXT }],
            metadata: { engagement_id: engagementId },
          },
        },
      }),
    })
    const body = JSON.parse(res.body) as {
      result?: { task?: { status?: { state?: string } } }
      error?: unknown
    }
    const state = body.result?.task?.status?.state
    if (state !== 'TASK_STATE_COMPLETED')
      throw new Error(`SendMessage: ${res.status} ${res.body.slice(0, 300)}`)
  }
  const ledgerIndex = async (taskId: string) =>
    (await call<{ receipt: { ledger_index: number | null } | null }>('GET', `/api/tasks/${taskId}`)).receipt
      ?.ledger_index ?? null

  const rest = await atRest(stack, floor)
  // one engagement per client, as 16 clients would have
  step('catalogue, token')
  const engagements = await Promise.all(Array.from({ length: CONCURRENCY }, hireAndSign))
  step('hired')
  // warm-up: connections, the dispatcher's SDK client and token, the JIT
  await timed(pidsOf(stack), 200, (w) => runTask(engagements[w]!).then(() => {}))
  await timed(pidsOf(stack), 200, (w) => a2aTask(engagements[w]!))
  await timed(floor.pids, 200, () => floorTask(floor))

  step('warmed up')
  let last = ''
  const statements = await sqlTallied(stack, () =>
    timed(pidsOf(stack), TASKS, async (w) => {
      last = await runTask(engagements[w]!)
    }),
  )
  const consoleRun = statements.result
  // the floor, then every client on the first engagement (a batch, a busy integration)
  const floorRun = await timed(floor.pids, TASKS, () => floorTask(floor))
  const oneRun = await timed(pidsOf(stack), TASKS, async () => {
    await runTask(engagements[0]!)
  })
  const a2aRun = await timed(pidsOf(stack), TASKS, (w) => a2aTask(engagements[w]!))
  const drainStart = performance.now()
  while ((await ledgerIndex(last)) === null) await new Promise((r) => setTimeout(r, 20))
  const drained = performance.now() - drainStart

  // one client alone: hire → sign → task → receipt on the ledger, and the answer → ledger delay
  const paths: number[] = []
  const delays: number[] = []
  for (let i = 0; i < PATHS; i++) {
    const t0 = performance.now()
    const taskId = await runTask(await hireAndSign())
    const answered = performance.now()
    while ((await ledgerIndex(taskId)) === null) await new Promise((r) => setTimeout(r, 2))
    const t1 = performance.now()
    paths.push(t1 - t0)
    delays.push(t1 - answered)
  }
  paths.sort((a, b) => a - b)
  delays.sort((a, b) => a - b)

  const line = (label: string, run: Timed) => console.log(`${label}: ${summary(run)}`)
  console.log(`\n-- ${backend}, one process per service, ${CONCURRENCY} clients, ${TASKS} tasks per measure`)
  printRest(rest)
  line('sync tasks, POST /api/tasks', consoleRun)
  if (statements.counts) printTally(statements.counts, TASKS)
  printFloor(floorRun, consoleRun)
  line(`sync tasks, ${CONCURRENCY} clients on ONE engagement`, oneRun)
  console.log(
    `  one engagement / ${CONCURRENCY} engagements rate: ${(oneRun.perSecond / consoleRun.perSecond).toFixed(2)}`,
  )
  line('sync tasks, A2A SendMessage (agt_ token)', a2aRun)
  console.log(`  A2A / console rate: ${(a2aRun.perSecond / consoleRun.perSecond).toFixed(2)}`)
  console.log(`the last task's receipt on the ledger ${drained.toFixed(0)} ms after the A2A measure ended`)
  console.log(
    `hire → sign → task → receipt on the ledger, ${PATHS} runs alone: p50 ${ms(quantile(paths, 0.5))} ms, p99 ${ms(quantile(paths, 0.99))} ms`,
  )
  console.log(
    `  task answered → its receipt on the ledger: p50 ${ms(quantile(delays, 0.5))} ms, p99 ${ms(quantile(delays, 0.99))} ms`,
  )
}

const ms = (v: number) => v.toFixed(1)
const cpuTotal = (run: Timed<string>) => Object.values(run.cpuMs).reduce((a, b) => a + b, 0)
const summary = (run: Timed<string>) =>
  `${run.perSecond.toFixed(1)} tasks/s; p50 ${ms(quantile(run.latencies, 0.5))} ms, p99 ${ms(quantile(run.latencies, 0.99))} ms, p99.9 ${ms(quantile(run.latencies, 0.999))} ms\n` +
  `  CPU per task: ${Object.entries(run.cpuMs)
    .map(([n, v]) => `${n} ${v.toFixed(2)} ms`)
    .join(', ')} (${cpuTotal(run).toFixed(2)} ms in all); generator ${run.generatorCpuMs.toFixed(2)} ms` +
  (run.postgresCpuMs === undefined
    ? ''
    : `\n  PostgreSQL's processes ${run.postgresCpuMs.toFixed(2)} ms per task: with them ${(cpuTotal(run) + run.postgresCpuMs).toFixed(2)} ms in all`)

async function floorTask(floor: Floor) {
  const res = await send(`${floor.url}/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: TEXT }),
  })
  if (res.status !== 200) throw new Error(`floor: ${res.status} ${res.body.slice(0, 300)}`)
}

/** The floor's line, and ours over the floor: rate, and the CPU per task of all our processes over the floor's. */
function printFloor(floor: Timed<string>, ours: Timed) {
  console.log(`floor (bench/floor: the same hops and rows, no business): ${summary(floor)}`)
  console.log(
    `  ours / floor: tasks/s ${(ours.perSecond / floor.perSecond).toFixed(2)}; CPU per task ${(cpuTotal(ours) / cpuTotal(floor)).toFixed(1)}× (rental alone ${(ours.cpuMs.rental / floor.cpuMs.service!).toFixed(1)}× the floor's service)`,
  )
}

/** Each process's CPU at rest (a share of one core) over REST_S seconds, and the rental's statements meanwhile. */
async function atRest(stack: Stack, floor: Floor) {
  await new Promise((r) => setTimeout(r, SETTLE_S * 1000))
  const pids = { ...pidsOf(stack), floor: floor.pids.service, 'floor peers': floor.pids.peers }
  const before = Object.values(pids).map(cpuSeconds)
  const started = performance.now()
  const tallied = await sqlTallied(stack, () => new Promise((r) => setTimeout(r, REST_S * 1000)))
  const seconds = (performance.now() - started) / 1000
  const share = Object.entries(pids).map(
    ([name, pid], i) => [name, (cpuSeconds(pid) - before[i]!) / seconds] as const,
  )
  return { share, statements: tallied.counts, seconds }
}

function printRest(rest: Awaited<ReturnType<typeof atRest>>) {
  console.log(
    `at rest (${REST_S} s, after ${SETTLE_S} s): ${rest.share.map(([n, v]) => `${n} ${(v * 100).toFixed(2)} %`).join(', ')} of a core`,
  )
  if (rest.statements) printTally(rest.statements, rest.seconds, 'second at rest')
}

/** The rental's statements while `run` ran, and 300 ms after (its event consumers gather 50 ms). */
async function sqlTallied<T>(stack: Stack, run: () => Promise<T>) {
  if (!tallyFolder) return { result: await run(), counts: undefined }
  const { pid } = stack.services.rental
  const file = join(tallyFolder, `${pid}.json`)
  const settle = () => new Promise((r) => setTimeout(r, 300))
  // each signal's counts are waited for: a loaded rental may take longer than a settle to write them
  const signal = async () => {
    rmSync(file, { force: true })
    process.kill(pid, 'SIGUSR2')
    while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20))
    await settle()
  }
  await settle()
  await signal()
  const result = await run()
  await settle()
  await signal()
  return { result, counts: JSON.parse(readFileSync(file, 'utf8')) as Record<string, number> }
}

function printTally(counts: Record<string, number>, per: number, unit = 'task') {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1])
  const total = rows.reduce((sum, [, n]) => sum + n, 0)
  console.log(`  rental SQL statements per ${unit}: ${(total / per).toFixed(1)} (begin and commit included)`)
  // every statement run at least once per 100 tasks (the measure's own and the background's)
  for (const [text, n] of rows.filter(([, n]) => n / per >= 0.01).slice(0, 60))
    console.log(
      `    ${(n / per).toFixed(2)}  ${text
        .split('\u0000')
        .map((t) => t.replace(/\s+/g, ' ').slice(0, 150))
        .join('\n          ')}`,
    )
}

console.log(
  `machine: ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; Node ${process.version}`,
)
// RENTAL_BENCH_BACKEND=postgres measures PostgreSQL only (DATABASE_URL), =pglite the embedded one only
const backends = [undefined, ...(process.env.DATABASE_URL ? [process.env.DATABASE_URL] : [])].filter(
  (url) =>
    !process.env.RENTAL_BENCH_BACKEND || (url ? 'postgres' : 'pglite') === process.env.RENTAL_BENCH_BACKEND,
)
for (const databaseUrl of backends) {
  const stack = await startStack({
    databaseUrl,
    admin: ADMIN,
    nodeArgs,
    ...(tallyFolder ? { env: { SVC_SQL_TALLY: tallyFolder } } : {}),
  })
  const floor = await startFloor({ databaseUrl, nodeArgs })
  onPostgres = Boolean(databaseUrl)
  try {
    await measure(stack, floor, databaseUrl ? 'PostgreSQL' : 'PGlite')
  } finally {
    await Promise.all([stack.stop(), floor.stop()])
  }
}
console.log(
  `load average at the end: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
)
