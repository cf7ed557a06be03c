/**
 * Several instances of every service on one PostgreSQL and one Redis, behind nginx: what
 * `npm run cluster` starts and what the cluster suite (scripts/cluster/*.cluster.ts) tests.
 *
 * Each service runs twice from its production bundle (scripts/build.ts), every instance with its
 * own port and the balancer's URL as its public URL (issuer, redirect URIs, the URLs the services
 * call each other by). nginx runs in the foreground as a child process, with its own configuration
 * and prefix in a temporary folder: round robin, no sticky sessions. Open-source nginx has only
 * passive health checks (an instance that refuses connections or answers 502/503 is skipped for
 * `fail_timeout`); active probes of `/readyz` need NGINX Plus or another balancer.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { repoRoot } from '../../packages/kit/src/paths.ts'
import { SERVICE_NAMES, type ServiceName } from '../../packages/kit/src/topology.ts'
import { bundleService } from '../build.ts'

export const INSTANCES = 2
/** How long nginx leaves out an instance after a failure: a rolling restart waits longer between instances. */
export const FAIL_TIMEOUT_S = 1
const READY_TIMEOUT_MS = 90_000
const LOG_TAIL = 40

export const NGINX_MISSING =
  'nginx is not installed: the cluster needs it as its load balancer. On Debian or Ubuntu: ' +
  'sudo apt-get install -y --no-install-recommends nginx (the cluster runs its own nginx with its own ' +
  'configuration; the system service need not run).'

/** The nginx binary, or undefined when it is not installed. */
export function findNginx(): string | undefined {
  for (const candidate of [
    'nginx',
    '/usr/sbin/nginx',
    '/usr/local/sbin/nginx',
    '/usr/local/nginx/sbin/nginx',
  ]) {
    const probe = spawnSync(candidate, ['-v'], { stdio: 'ignore' })
    if (probe.status === 0) return candidate
  }
  return undefined
}

export interface Instance {
  service: ServiceName
  index: number
  port: number
  /** The instance itself, bypassing the balancer. */
  url: string
  process: ChildProcess
  tail: string[]
  exited: Promise<number | null>
}

export interface ClusterOptions {
  databaseUrl: string
  redisUrl: string
  /** Schemas are `<prefix><service>` (and `<prefix><service>_jobs`). */
  schemaPrefix: string
  /** Drops the schemas when the cluster stops (a test cluster). */
  dropSchemas?: boolean
  /** The balancer's ports (idp, ledger, rental, agents in that order, each instance on the next ports); free ports otherwise. */
  basePort?: number
  /** Variables given to every instance (after the cluster's own). */
  env?: Record<string, string>
  /** How long a SIGTERMed instance keeps answering before it stops taking requests. */
  shutdownDelayMs?: number
  /** Instances of each service (INSTANCES by default). */
  instances?: number
}

export interface Cluster {
  /** The balancer's URL of each service: what clients use. */
  urls: Record<ServiceName, string>
  instances: Instance[]
  /** The temporary folder: nginx's prefix and configuration, the shared development data folder. */
  dir: string
  /** A development secret the instances share (kept in the cluster's data folder). */
  devSecret(name: string): string
  instance(service: ServiceName, index: number): Instance
  /** Starts an instance again (after it exited) and waits until it is ready. */
  restart(instance: Instance): Promise<Instance>
  stop(): Promise<void>
}

/**
 * A port below the kernel's ephemeral range, free when probed. A port from `listen(0)` comes from
 * that range, and an outbound connection of an instance already running (PostgreSQL, Redis, a
 * call between services) could take it as its local port before its own instance listens on it.
 */
const taken = new Set<number>()
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0])
    if (Number.isInteger(low) && low > 12_000) return low
  } catch {}
  return 32_768
}
const probe = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1
  const low = high - 10_000
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low))
    if (taken.has(port) || !(await probe(port))) continue
    taken.add(port)
    return port
  }
  throw new Error(`no free port found between ${low} and ${high}`)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Every process the clusters of this process started and not yet seen exit. */
const children = new Set<ChildProcess>()
let exitHookSet = false

/**
 * A process that exits (an uncaught error, `process.exit`) takes its cluster with it;
 * CLUSTER_PIDS_FILE also lists the pids, for `npm run test:cluster` to end any left when the test
 * process was killed outright (a time limit).
 */
function adopt(child: ChildProcess) {
  children.add(child)
  child.once('exit', () => children.delete(child))
  if (process.env.CLUSTER_PIDS_FILE && child.pid)
    appendFileSync(process.env.CLUSTER_PIDS_FILE, `${child.pid}\n`)
  if (!exitHookSet) {
    exitHookSet = true
    process.on('exit', () => {
      for (const c of children) c.kill('SIGKILL')
    })
  }
}

export function nginxConfig(
  dir: string,
  publicPorts: Record<ServiceName, number>,
  instancePorts: Record<ServiceName, number[]>,
): string {
  const servers = SERVICE_NAMES.map((name) => {
    const members = instancePorts[name]
      // passive health: one failure (refused connection, timeout, 502/503) takes it out for a second
      .map((port) => `    server 127.0.0.1:${port} max_fails=1 fail_timeout=${FAIL_TIMEOUT_S}s;`)
      .join('\n')
    // a ledger append is idempotent (a duplicate receipt answers its existing index), so a POST
    // the instance may have received is safe to send to the other; elsewhere nginx retries a POST
    // only when it was never sent (a refused connection)
    const retry =
      name === 'ledger'
        ? 'proxy_next_upstream error timeout http_502 http_503 non_idempotent;'
        : 'proxy_next_upstream error timeout http_502 http_503;'
    return `  upstream ${name} {
${members}
  }
  server {
    listen 127.0.0.1:${publicPorts[name]};
    location / {
      proxy_pass http://${name};
      ${retry}
      proxy_next_upstream_tries 2;
    }
  }`
  }).join('\n')
  return `# the cluster's balancer (scripts/cluster/cluster.ts): one process in the foreground
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  client_max_body_size 110m;
  # HTTP/1.1 without upstream keep-alive: each request on a new connection, so a stopped
  # instance refuses it before anything is sent and nginx passes it to the other
  proxy_http_version 1.1;
  proxy_set_header Connection close;
  proxy_set_header Host $http_host;
  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
  proxy_set_header X-Forwarded-Proto $scheme;
  # server-sent events (a task's progress) pass through as they come
  proxy_buffering off;
  proxy_connect_timeout 2s;
  proxy_read_timeout 120s;
${servers}
}
`
}

function follow(instance: Instance, stream: NodeJS.ReadableStream) {
  createInterface({ input: stream }).on('line', (line) => {
    instance.tail.push(line)
    if (instance.tail.length > LOG_TAIL) instance.tail.shift()
  })
}

async function waitReady(url: string, alive: () => boolean, what: string, tail: () => string[]) {
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`${what} exited before it was ready:\n${tail().join('\n')}`)
    try {
      if ((await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3_000) })).ok) return
    } catch {}
    await sleep(150)
  }
  throw new Error(`${what} was not ready within ${READY_TIMEOUT_MS / 1000}s:\n${tail().join('\n')}`)
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const nginx = findNginx()
  if (!nginx) throw new Error(NGINX_MISSING)
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-'))
  const dataDir = join(dir, 'data')
  mkdirSync(dataDir)

  const publicPorts = {} as Record<ServiceName, number>
  const instancePorts = {} as Record<ServiceName, number[]>
  for (const [i, name] of SERVICE_NAMES.entries()) {
    const base = options.basePort ? options.basePort + i * 100 : undefined
    publicPorts[name] = base ?? (await freePort())
    instancePorts[name] = []
    for (let k = 1; k <= (options.instances ?? INSTANCES); k++)
      instancePorts[name].push(base ? base + k : await freePort())
  }
  const urls = Object.fromEntries(
    SERVICE_NAMES.map((name) => [name, `http://127.0.0.1:${publicPorts[name]}`]),
  ) as Record<ServiceName, string>

  const entries = Object.fromEntries(
    await Promise.all(SERVICE_NAMES.map(async (name) => [name, await bundleService(name)] as const)),
  ) as Record<ServiceName, string>

  const envOf = (name: ServiceName, port: number): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // development: the demo account and catalogue, and secrets shared through the data folder
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: options.databaseUrl,
    DATABASE_SCHEMA: `${options.schemaPrefix}${name}`,
    REDIS_URL: options.redisUrl,
    JOBS_MAINTENANCE_S: '5',
    SHUTDOWN_DELAY_MS: String(options.shutdownDelayMs ?? 1_000),
    ...Object.fromEntries(SERVICE_NAMES.map((s) => [`${s.toUpperCase()}_URL`, urls[s]])),
    [`${name.toUpperCase()}_PORT`]: String(port),
    ...options.env,
  })

  const instances: Instance[] = []
  const launch = (service: ServiceName, index: number): Instance => {
    const port = instancePorts[service][index]!
    const proc = spawn(process.execPath, ['--enable-source-maps', entries[service]], {
      cwd: repoRoot(),
      env: envOf(service, port),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    adopt(proc)
    const instance: Instance = {
      service,
      index,
      port,
      url: `http://127.0.0.1:${port}`,
      process: proc,
      tail: [],
      exited: new Promise((resolve) => proc.on('exit', (code) => resolve(code))),
    }
    follow(instance, proc.stdout!)
    follow(instance, proc.stderr!)
    const at = instances.findIndex((i) => i.service === service && i.index === index)
    if (at >= 0) instances[at] = instance
    else instances.push(instance)
    return instance
  }
  const ready = (instance: Instance) =>
    waitReady(
      instance.url,
      () => instance.process.exitCode === null && instance.process.signalCode === null,
      `${instance.service}#${instance.index + 1}`,
      () => instance.tail,
    )

  const confPath = join(dir, 'nginx.conf')
  writeFileSync(confPath, nginxConfig(dir, publicPorts, instancePorts))
  let balancer: ChildProcess | undefined
  let balancerLog: string[] = []

  const stop = async () => {
    await Promise.all(
      instances.map(async (instance) => {
        if (instance.process.exitCode !== null || instance.process.signalCode !== null) return
        instance.process.kill('SIGTERM')
        const killer = setTimeout(() => instance.process.kill('SIGKILL'), 15_000)
        await instance.exited
        clearTimeout(killer)
      }),
    )
    if (balancer && balancer.exitCode === null) {
      const gone = new Promise((r) => balancer!.once('exit', r))
      balancer.kill('SIGTERM')
      await gone
    }
    if (options.dropSchemas) {
      const client = new pg.Client({ connectionString: options.databaseUrl })
      await client.connect()
      try {
        for (const name of SERVICE_NAMES)
          await client.query(
            `drop schema if exists ${options.schemaPrefix}${name} cascade; drop schema if exists ${options.schemaPrefix}${name}_jobs cascade`,
          )
      } finally {
        await client.end()
      }
    }
    rmSync(dir, { recursive: true, force: true })
  }

  try {
    // the first instance of each service, then the second: the second finds what the first made
    // (the idp's signing keys, the console's client at the idp); migrations would also be safe
    // together (an advisory lock), see docs/operations.md
    const first = SERVICE_NAMES.map((name) => launch(name, 0))
    balancer = spawn(nginx, ['-p', dir, '-c', confPath, '-e', join(dir, 'nginx-error.log')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    adopt(balancer)
    balancer.stderr!.on(
      'data',
      (chunk: Buffer) => (balancerLog = [...balancerLog, chunk.toString()].slice(-20)),
    )
    await Promise.all(first.map(ready))
    for (let index = 1; index < (options.instances ?? INSTANCES); index++)
      await Promise.all(SERVICE_NAMES.map((name) => launch(name, index)).map(ready))
    for (const name of SERVICE_NAMES)
      await waitReady(
        urls[name],
        () => balancer!.exitCode === null,
        `nginx (${name})`,
        () => balancerLog,
      )
  } catch (err) {
    await stop().catch(() => {})
    throw err
  }

  return {
    urls,
    instances,
    dir,
    devSecret: (name) => readFileSync(join(dataDir, name), 'utf8').trim(),
    instance: (service, index) => instances.find((i) => i.service === service && i.index === index)!,
    async restart(instance) {
      if (instance.process.exitCode === null && instance.process.signalCode === null)
        throw new Error(`${instance.service}#${instance.index + 1} is still running`)
      const again = launch(instance.service, instance.index)
      await ready(again)
      return again
    },
    stop,
  }
}
