import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { type Database, openDatabase } from './db/database.ts'

/** True when the suite runs against a PostgreSQL server (DATABASE_URL set). */
export const onPostgres = Boolean(process.env.DATABASE_URL)

/** A throwaway database: PGlite in memory, or a new schema on PostgreSQL dropped on close. */
export function freshDatabase(label = 'test', options: { embedded?: boolean } = {}): Promise<Database> {
  const url = options.embedded ? undefined : process.env.DATABASE_URL
  return openDatabase({ url, schema: `t${randomBytes(5).toString('hex')}_${label}`, dropSchemaOnClose: true })
}

/** A temporary folder holding the given files. */
export function tempFolder(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

/**
 * A free port a test can stop a service on and start it again on. It lies below the kernel's
 * ephemeral range, so no outgoing connection is given it while the service is down (a port
 * from `listen(0)` or a random one inside that range can be, and the restart then fails
 * with EADDRINUSE).
 */
export const restartablePort = (): Promise<number> => restartablePorts(1)

/** The first of `count` consecutive free ports below the ephemeral range (see `restartablePort`). */
export async function restartablePorts(count: number): Promise<number> {
  let ephemeralStart = 32_768
  try {
    ephemeralStart = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    )
  } catch {}
  const low = 15_000
  const high = Math.max(low + 1000, ephemeralStart) - count
  for (let attempt = 0; ; attempt++) {
    const base = low + Math.floor(Math.random() * (high - low))
    const free = await Promise.all(Array.from({ length: count }, (_, i) => portFree(base + i)))
    if (free.every(Boolean)) return base
    if (attempt === 50) throw new Error('no free ports below the ephemeral range')
  }
}

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })

export interface JsonResponse {
  status: number
  headers: Headers
  body: Record<string, unknown>
}

/** A request whose JSON answer is parsed (or kept as text when it is not JSON). */
export async function request(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  const res = await fetch(url, init)
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, headers: res.headers, body: body as Record<string, unknown> }
}

/** The service environment for tests: quiet logs, and whatever backend the suite runs on. */
export const testEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  LOG_LEVEL: 'silent',
  ...extra,
})

/** The names of the migrations a database has applied, in order. */
export async function appliedMigrations(database: Database): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from schema_migrations order by name`.execute(
    database.db,
  )
  return rows.map((r) => r.name)
}

/** Cookies as a browser keeps them for one site: what Set-Cookie gave, sent back on the next requests. */
export class CookieJar {
  readonly #cookies = new Map<string, string>()
  readonly attributes = new Map<string, string>()

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';')
      const at = pair.indexOf('=')
      const name = pair.slice(0, at).trim()
      const value = pair.slice(at + 1).trim()
      this.attributes.set(name, attributes.map((a) => a.trim()).join('; '))
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.#cookies.delete(name)
      else this.#cookies.set(name, value)
    }
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name)
  }

  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  /** A request that sends and keeps cookies, not following redirects. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    if (this.#cookies.size) headers.set('cookie', this.header())
    const res = await fetch(url, { ...init, headers, redirect: 'manual' })
    this.store(res)
    return res
  }
}
