import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
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
