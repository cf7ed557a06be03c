/**
 * Starts the floor (bench/floor/service.ts and peers.ts, one process each) on the backend the
 * bench measures: PGlite in a data directory of its own, or PostgreSQL in a schema of its own,
 * dropped on stop. The processes' CPU is read from /proc by their pids, as the services'.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import pg from 'pg'
import { tempFolder } from '../../packages/kit/src/testing.ts'
import { freePort } from '../load.ts'

export interface Floor {
  url: string
  pids: { service: number; peers: number }
  stop(): Promise<void>
}

async function ready(child: ChildProcess, url: string, name: string) {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`floor ${name} exited with ${child.exitCode}`)
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`floor ${name} was not ready`)
}

export async function startFloor(options: {
  databaseUrl?: string | undefined
  nodeArgs?: string[]
}): Promise<Floor> {
  const [port, peersPort] = [await freePort(), await freePort()]
  const peersUrl = `http://127.0.0.1:${peersPort}`
  const url = `http://127.0.0.1:${port}`
  const schema = `bench_floor_${randomBytes(4).toString('hex')}`
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FLOOR_PORT: String(port),
    FLOOR_PEERS_PORT: String(peersPort),
    FLOOR_PEERS_URL: peersUrl,
  }
  delete env.DATABASE_URL
  if (options.databaseUrl) Object.assign(env, { DATABASE_URL: options.databaseUrl, DATABASE_SCHEMA: schema })
  else env.FLOOR_DATA_DIR = join(tempFolder(), 'floor')
  const start = (file: string) =>
    spawn(
      process.execPath,
      [...(options.nodeArgs ?? []), '--import', 'tsx', join(import.meta.dirname, file)],
      {
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    )
  const peers = start('peers.ts')
  await ready(peers, peersUrl, 'peers')
  const service = start('service.ts')
  await ready(service, url, 'service')
  return {
    url,
    pids: { service: service.pid!, peers: peers.pid! },
    async stop() {
      await Promise.all(
        [service, peers].map(async (child) => {
          if (child.exitCode !== null) return
          const exited = new Promise((r) => child.once('exit', r))
          child.kill('SIGTERM')
          await exited
        }),
      )
      if (!options.databaseUrl) return
      const client = new pg.Client({ connectionString: options.databaseUrl })
      await client.connect()
      await client.query(`drop schema if exists ${schema} cascade`)
      await client.end()
    },
  }
}
