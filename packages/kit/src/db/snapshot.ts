import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Kysely, sql } from 'kysely'
import PgBoss from 'pg-boss'
import { repoRoot } from '../paths.ts'
import { type Database, jobsSchema } from './database.ts'
import { migrate, readMigrations } from './migrator.ts'
import { createPGlite, versionTag } from './pglite.ts'
import { PGliteDialect } from './pglite-dialect.ts'

// bump when what a snapshot holds changes in a way its inputs do not show
const FORMAT = 1
const loaded = new Map<string, Promise<Blob>>()

function pgBossVersion(): string {
  const pkg = join(repoRoot(), 'node_modules', 'pg-boss', 'package.json')
  return existsSync(pkg) ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version : 'unknown'
}

/** What a snapshot depends on: the migrations' names and contents, the schema, PGlite and pg-boss. */
export function snapshotKey(schema: string, migrationsDir: string): string {
  const hash = createHash('sha256').update(`${FORMAT} ${schema} ${versionTag()} ${pgBossVersion()}\n`)
  for (const m of readMigrations(migrationsDir)) hash.update(`${m.name} ${m.checksum}\n`)
  return hash.digest('hex').slice(0, 16)
}

/**
 * An in-memory PGlite cluster with `schema` migrated and pg-boss's jobs schema installed, dumped
 * once per set of migrations to `.data/pglite-snapshots/` and loaded by every fresh database of
 * the service: a test boot then finds no migration pending (checksums are still verified).
 */
export function migratedSnapshot(schema: string, migrationsDir: string): Promise<Blob> {
  const path = snapshotPath(schema, migrationsDir)
  let snapshot = loaded.get(path)
  if (!snapshot) {
    snapshot = prepareSnapshot(schema, migrationsDir).then(() => new Blob([readFileSync(path)]))
    snapshot.catch(() => loaded.delete(path))
    loaded.set(path, snapshot)
  }
  return snapshot
}

function snapshotPath(schema: string, migrationsDir: string): string {
  return join(repoRoot(), '.data', 'pglite-snapshots', `${schema}-${snapshotKey(schema, migrationsDir)}.tar`)
}

/**
 * Makes the snapshot file unless it exists (`npm test` makes them before the test processes
 * start). Written to a temporary file and renamed, so processes starting together may each make it;
 * the snapshots of older migrations are removed.
 */
export async function prepareSnapshot(schema: string, migrationsDir: string): Promise<string> {
  const path = snapshotPath(schema, migrationsDir)
  if (existsSync(path)) return path
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true })
  const tmp = `${path}.${process.pid}`
  writeFileSync(tmp, await makeSnapshot(schema, migrationsDir))
  renameSync(tmp, path)
  for (const old of readdirSync(dir))
    if (old.startsWith(`${schema}-`) && old.endsWith('.tar') && join(dir, old) !== path)
      rmSync(join(dir, old), { force: true })
  return path
}

async function makeSnapshot(schema: string, migrationsDir: string): Promise<Uint8Array> {
  const pglite = await createPGlite(undefined)
  try {
    await pglite.exec(`create schema ${schema}; set search_path to ${schema}`)
    const db = new Kysely({ dialect: new PGliteDialect(pglite) })
    const database: Database = {
      db,
      backend: 'pglite',
      schema,
      tracer: undefined,
      ping: async () => true,
      schemaChanged: async () => {},
      close: async () => {},
    }
    await migrate(database, migrationsDir)
    await sql.raw(PgBoss.getConstructionPlans(jobsSchema(schema))).execute(db)
    const tar = await pglite.dumpDataDir('none')
    return new Uint8Array(await tar.arrayBuffer())
  } finally {
    await pglite.close()
  }
}
