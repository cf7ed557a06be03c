/**
 * `npm run bench -- cluster`: rental tasks/s, ledger appends/s and idp grants/s through nginx,
 * with one and with two instances of each service (scripts/cluster/), and the CPU each request
 * cost the services' processes (from /proc). Needs DATABASE_URL, REDIS_URL and nginx; skips
 * without them. On 2 cores a second instance adds no CPU: compare the CPU per request.
 */
import { readFileSync } from 'node:fs'
import { findNginx, startCluster, type Cluster } from '../scripts/cluster/cluster.ts'
import { append, consoleCall, consoleSignIn, hireSummariser } from '../scripts/cluster/helpers.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CLIENTS = 16

if (!process.env.DATABASE_URL || !process.env.REDIS_URL || !findNginx()) {
  console.log('cluster bench skipped: it needs DATABASE_URL, REDIS_URL and nginx')
  process.exit(0)
}
const redis = new URL(process.env.REDIS_URL)
redis.pathname = '/9'

/** CPU seconds (user + system) of a process so far. */
function cpuOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return 0
  }
}
const servicesCpu = (cluster: Cluster) => cluster.instances.reduce((sum, i) => sum + cpuOf(i.process.pid), 0)

async function measure(cluster: Cluster, what: string, one: () => Promise<void>) {
  let done = 0
  let failed = 0
  const until = Date.now() + SECONDS * 1000
  const cpu0 = servicesCpu(cluster)
  const started = Date.now()
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until)
        await one().then(
          () => done++,
          () => failed++,
        )
    }),
  )
  const seconds = (Date.now() - started) / 1000
  const cpuMs = ((servicesCpu(cluster) - cpu0) * 1000) / Math.max(1, done)
  return { what, rate: done / seconds, cpuMs, failed }
}

const results: Record<number, Array<{ what: string; rate: number; cpuMs: number; failed: number }>> = {}
for (const instances of [1, 2]) {
  const cluster = await startCluster({
    databaseUrl: process.env.DATABASE_URL,
    redisUrl: redis.toString(),
    schemaPrefix: `b${Date.now().toString(36)}_`,
    dropSchemas: true,
    instances,
    env: { LOG_LEVEL: 'error', IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' },
  })
  try {
    const session = await consoleSignIn(cluster)
    const { id } = await hireSummariser(session, [cluster.urls.rental])
    const created = await fetch(`${cluster.urls.idp}/manage/v1/clients`, {
      method: 'POST',
      headers: { 'x-admin-token': cluster.devSecret('idp.admin-token'), 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Bench',
        client_type: 'confidential',
        first_party: true,
        redirect_uris: ['http://127.0.0.1:9/cb'],
      }),
    })
    const client = (await created.json()) as { client_id: string; client_secret: string }
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`
    let n = 0
    results[instances] = [
      await measure(cluster, 'rental sync tasks/s (POST /api/tasks)', async () => {
        const res = await consoleCall(session, cluster.urls.rental, 'POST', '/api/tasks', {
          engagement_id: id,
          text: 'Several instances share one database. Each task is paid from its own escrow.',
        })
        if (res.status !== 200) throw new Error(String(res.status))
      }),
      await measure(cluster, 'ledger appends/s (POST /v1/receipts)', async () => {
        await append(cluster.urls.ledger, `bench-${instances}-${n++}-${Math.random()}`)
      }),
      await measure(cluster, 'idp grants/s (client_credentials)', async () => {
        const res = await fetch(`${cluster.urls.idp}/token`, {
          method: 'POST',
          headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials',
        })
        await res.arrayBuffer()
        if (res.status !== 200) throw new Error(String(res.status))
      }),
    ]
  } finally {
    await cluster.stop()
  }
}

const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
console.log(`\n${CLIENTS} clients, ${SECONDS} s each, load average now ${load}\n`)
console.log('measure'.padEnd(40), 'one instance'.padEnd(22), 'two instances'.padEnd(22), 'ratio')
for (const [i, one] of results[1]!.entries()) {
  const two = results[2]![i]!
  const cell = (r: typeof one) =>
    `${r.rate.toFixed(0)}/s, ${r.cpuMs.toFixed(1)} ms CPU${r.failed ? `, ${r.failed} failed` : ''}`.padEnd(22)
  console.log(one.what.padEnd(40), cell(one), cell(two), (two.rate / one.rate).toFixed(2))
}
