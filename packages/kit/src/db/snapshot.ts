import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Kysely, sql } from 'kysely'
import PgBoss from 'pg-boss'
import { repoRoot } from '../paths.ts'
import { type Database, jobsSchema } from './database.ts'
import { migrate, readMigrations } from './migrator.ts'
import { createPGlite, versionTag } from './pglite.ts'
import { PGliteDialect } from './pglite-dialect.ts'

// bump when what a snapshot holds changes in a way its inputs do not show
const FORMAT = 1
const made = new Map<string, Promise<Blob>>()

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
 * Written to a temporary file and renamed, so test processes starting together may each make it.
 */
export function migratedSnapshot(schema: string, migrationsDir: string): Promise<Blob> {
  const dir = join(repoRoot(), '.data', 'pglite-snapshots')
  const path = join(dir, `${schema}-${snapshotKey(schema, migrationsDir)}.tar`)
  let snapshot = made.get(path)
  if (!snapshot) {
    snapshot = (async () => {
      if (!existsSync(path)) {
        mkdirSync(dir, { recursive: true })
        const tmp = `${path}.${process.pid}`
        writeFileSync(tmp, await makeSnapshot(schema, migrationsDir))
        renameSync(tmp, path)
        for (const old of readdirSync(dir))
          if (old.startsWith(`${schema}-`) && old.endsWith('.tar') && join(dir, old) !== path)
            rmSync(join(dir, old), { force: true })
      }
      return new Blob([readFileSync(path)])
    })()
    snapshot.catch(() => made.delete(path))
    made.set(path, snapshot)
  }
  return snapshot
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
      ping: async () => true,
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
