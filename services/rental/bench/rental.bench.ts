/**
 * The rental's figures (npm run bench -- rental): the real idp, ledger, agents and rental in this
 * one process, on the embedded database (or PostgreSQL when DATABASE_URL is set):
 *   sync tasks per second through POST /api/tasks with the built-in summariser, RENTAL_BENCH_CONCURRENCY at once,
 *   the latency of the whole hire → sign → task → receipt-on-the-ledger path (p50, p99).
 * Every service shares this process's one core of JavaScript, so the figures are a floor.
 */
import { cpus } from 'node:os'
import { performance } from 'node:perf_hooks'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import { b64uEncode } from '@svc/trust/base64url'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { generateEd25519, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { agents } from '../../agents/src/app.ts'
import { idp } from '../../idp/src/app.ts'
import { ledger } from '../../ledger/src/app.ts'
import { rental } from '../src/app.ts'
import { ADMIN, eventually, signIn, type Stack } from '../test/stack.ts'

const TASKS = Number(process.env.RENTAL_BENCH_TASKS ?? 200)
const CONCURRENCY = Number(process.env.RENTAL_BENCH_CONCURRENCY ?? 8)
const PATHS = Number(process.env.RENTAL_BENCH_PATHS ?? 30)
const TEXT =
  'The ledger records every receipt the platform issues. Each receipt is a leaf in a Merkle tree. Witnesses cosign the checkpoints, so a log that forks is caught. Clients sign their escrows with their own keys. The weather was hot.'

interface Signed {
  body: Record<string, unknown>
  hash: string
}

const services: Array<RunningService<unknown>> = []
const started = async <C>(service: Promise<RunningService<C>>) => {
  const s = await service
  services.push(s as RunningService<unknown>)
  return s
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

async function main() {
  const quiet = { IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0', IDP_ADMIN_TOKEN: ADMIN }
  const idpService = await started(startService(idp, testEnv(quiet), { fresh: true }))
  const ledgerService = await started(
    startService(ledger, testEnv({ LEDGER_BATCH_WAIT_MS: '2' }), { fresh: true }),
  )
  const agentsService = await started(
    startService(agents, testEnv({ AGENTS_KEY_SEED: Buffer.alloc(32, 9).toString('base64url') }), {
      fresh: true,
    }),
  )
  const rentalService = await started(
    startService(
      rental,
      testEnv({
        IDP_URL: idpService.url,
        LEDGER_URL: ledgerService.url,
        AGENTS_URL: agentsService.url,
        RENTAL_IDP_ADMIN_TOKEN: ADMIN,
        RENTAL_DEMO_WALLET_FILS: '100000000',
      }),
      { fresh: true },
    ),
  )
  await eventually('the rental is ready', async () => (await fetch(`${rentalService.url}/readyz`)).ok)
  const { jar, csrf } = await signIn(
    { idp: idpService, rental: rentalService } as unknown as Stack,
    new CookieJar(),
  )

  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await jar.fetch(`${rentalService.url}${path}`, {
      method,
      headers: {
        'x-csrf-token': csrf,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const answer = (await res.json()) as T
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer)}`)
    return answer
  }
  let agentDid = ''
  await eventually('the catalogue lists the summariser', async () => {
    const { jobs } = await call<{ jobs: Array<{ id: string; agents: Array<{ did: string }> }> }>(
      'GET',
      '/api/jobs',
    )
    agentDid = jobs.find((j) => j.id === 'job_summary')?.agents[0]?.did ?? ''
    return agentDid !== ''
  })

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
  const runTask = (engagementId: string) =>
    call<{ task: { id: string; state: string } }>('POST', '/api/tasks', {
      engagement_id: engagementId,
      text: TEXT,
    })

  // warm-up: connections, the SDK client's card, the JIT
  const engagement = await hireAndSign()
  for (let i = 0; i < 10; i++) await runTask(engagement)

  const onLedger = async (taskId: string) => {
    const detail = await call<{ receipt: { ledger_index: number | null } | null }>(
      'GET',
      `/api/tasks/${taskId}`,
    )
    return detail.receipt?.ledger_index !== null && detail.receipt?.ledger_index !== undefined
  }
  const waitOnLedger = async (taskId: string, seconds = 300) => {
    const deadline = Date.now() + seconds * 1000
    while (!(await onLedger(taskId))) {
      if (Date.now() > deadline) throw new Error(`the receipt of ${taskId} is not on the ledger`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  let next = 0
  let last = ''
  const begin = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < TASKS) {
        const { task } = await runTask(engagement)
        if (task.state !== 'completed') throw new Error(`task ${task.id} is ${task.state}`)
        last = task.id
      }
    }),
  )
  const seconds = (performance.now() - begin) / 1000
  // the receipts go to the ledger through the outbox, behind the tasks: the backlog drains first
  await waitOnLedger(last)
  const drained = (performance.now() - begin) / 1000

  const latencies: number[] = []
  for (let i = 0; i < PATHS; i++) {
    const t0 = performance.now()
    const { task } = await runTask(await hireAndSign())
    await eventually('the receipt is on the ledger', async () => {
      const detail = await call<{ receipt: { ledger_index: number | null } | null }>(
        'GET',
        `/api/tasks/${task.id}`,
      )
      return detail.receipt?.ledger_index !== null && detail.receipt?.ledger_index !== undefined
    })
    latencies.push(performance.now() - t0)
  }
  latencies.sort((a, b) => a - b)

  const backend = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'
  console.log(`machine: ${cpus().length} cores; ${backend}; every service in this one process`)
  console.log(
    `sync tasks (summariser over A2A): ${TASKS} in ${seconds.toFixed(1)} s = ${(TASKS / seconds).toFixed(1)} tasks/s at concurrency ${CONCURRENCY}`,
  )
  console.log(`their ${TASKS} receipts all on the ledger ${drained.toFixed(1)} s after the first task`)
  console.log(
    `hire → sign → task → receipt on the ledger, ${PATHS} runs: p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p99 ${quantile(latencies, 0.99).toFixed(0)} ms`,
  )
}

try {
  await main()
} finally {
  for (const service of services.reverse()) await service.close().catch(() => {})
}
