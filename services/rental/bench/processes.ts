/**
 * The four services as `npm start` runs them (each bundled with esbuild, one process each), on
 * fresh data: PGlite in a temporary DATA_DIR, or PostgreSQL in schemas of their own. The load
 * generator's side is bench/load.ts, re-exported here.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempFolder } from '@svc/kit/testing'
import pg from 'pg'
import { bundleService } from '../../../scripts/build.ts'
import { freePort } from '../../../bench/load.ts'

export { type Answer, cpuSeconds, postgresCpuSeconds, quantile, send } from '../../../bench/load.ts'

export const SERVICES = ['idp', 'ledger', 'agents', 'rental'] as const
export type Name = (typeof SERVICES)[number]

export interface Running {
  name: Name
  url: string
  pid: number
  child: ChildProcess
}

export interface Stack {
  services: Record<Name, Running>
  dataDir: string
  demoPassword: string
  stop(): Promise<void>
}

async function waitReady(s: Running) {
  for (let i = 0; i < 1800; i++) {
    if (s.child.exitCode !== null) throw new Error(`${s.name} exited with ${s.child.exitCode}`)
    if (
      await fetch(`${s.url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${s.name} was not ready`)
}

/** Starts the four services; `nodeArgs` go to each (e.g. --cpu-prof). */
export async function startStack(options: {
  databaseUrl?: string
  admin: string
  nodeArgs: string[]
  env?: Record<string, string>
}): Promise<Stack> {
  const entries = await Promise.all(SERVICES.map(bundleService))
  const ports = await Promise.all(SERVICES.map(freePort))
  const url = (i: number) => `http://127.0.0.1:${ports[i]}`
  const dataDir = tempFolder()
  const tag = randomBytes(4).toString('hex')
  const schemas = SERVICES.map((name) => `bench_${tag}_${name}`)
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.RENTAL_BENCH_LOG_LEVEL ?? 'warn',
    DATA_DIR: dataDir,
    IDP_ADMIN_TOKEN: options.admin,
    RENTAL_IDP_ADMIN_TOKEN: options.admin,
    IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
    IDP_TOKEN_RATE_PER_MIN_IP: '0',
    RENTAL_DEMO_WALLET_FILS: '1000000000000',
    ...options.env,
  }
  SERVICES.forEach((name, i) => {
    env[`${name.toUpperCase()}_PORT`] = String(ports[i])
    env[`${name.toUpperCase()}_URL`] = url(i)
  })
  delete env.DATABASE_URL
  delete env.DATABASE_SCHEMA
  delete env.REDIS_URL
  const services = {} as Record<Name, Running>
  const children: Running[] = []
  // the agents first (the rental's catalogue reads them), the idp and ledger beside them
  for (const group of [['idp', 'ledger', 'agents'], ['rental']] as Name[][]) {
    for (const name of group) {
      const i = SERVICES.indexOf(name)
      const own = options.databaseUrl
        ? { ...env, DATABASE_URL: options.databaseUrl, DATABASE_SCHEMA: schemas[i] }
        : env
      const child = spawn(process.execPath, [...options.nodeArgs, '--enable-source-maps', entries[i]!], {
        env: own,
        stdio: ['ignore', 'ignore', 'inherit'],
      })
      const running = { name, url: url(i), pid: child.pid!, child }
      services[name] = running
      children.push(running)
    }
    await Promise.all(group.map((name) => waitReady(services[name])))
  }
  return {
    services,
    dataDir,
    demoPassword: readFileSync(join(dataDir, 'idp.demo-password'), 'utf8').trim(),
    async stop() {
      await Promise.all(
        children.map(async ({ child }) => {
          if (child.exitCode !== null) return
          const exited = new Promise((r) => child.once('exit', r))
          child.kill('SIGTERM')
          await exited
        }),
      )
      if (options.databaseUrl) {
        const client = new pg.Client({ connectionString: options.databaseUrl })
        await client.connect()
        for (const schema of schemas)
          await client.query(
            `drop schema if exists ${schema} cascade; drop schema if exists ${schema}_jobs cascade`,
          )
        await client.end()
      }
    },
  }
}
