import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Kysely, sql } from 'kysely'
import type { Database } from './database.ts'

export interface Migration {
  name: string
  checksum: string
  sql: string
}

const FILE_NAME = /^\d{4}_[a-z0-9_]+\.sql$/

/** Reads a folder of forward-only migrations, NNNN_name.sql, in order. */
export function readMigrations(dir: string): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
  return files.map((name) => {
    if (!FILE_NAME.test(name)) throw new Error(`migration file ${name} in ${dir} must be named NNNN_name.sql`)
    const text = readFileSync(join(dir, name), 'utf8')
    return { name, sql: text, checksum: createHash('sha256').update(text).digest('hex') }
  })
}

interface Applied {
  name: string
  checksum: string
}

/**
 * Applies the pending migrations, one transaction per file. An advisory lock keeps two instances
 * starting together from applying the same file twice. A migration changed after it was applied,
 * or one the database has that this code does not know, stops the boot: the code and the
 * database no longer describe the same schema.
 */
export async function migrate(database: Database, dir: string): Promise<string[]> {
  const migrations = readMigrations(dir)
  const lockKey = `migrate:${database.schema}`
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the migrator works on any service's schema
  return (database.db as Kysely<any>).connection().execute(async (conn) => {
    // polled rather than waited for: a wait longer than the statement timeout would be cancelled
    for (;;) {
      const { rows } = await sql<{
        locked: boolean
      }>`select pg_try_advisory_lock(hashtext(${lockKey})) as locked`.execute(conn)
      if (rows[0]?.locked) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    try {
      await sql`create table if not exists schema_migrations (
        name text primary key,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`.execute(conn)
      const applied = await sql<Applied>`select name, checksum from schema_migrations order by name`.execute(
        conn,
      )
      const known = new Map(migrations.map((m) => [m.name, m]))
      for (const row of applied.rows) {
        const migration = known.get(row.name)
        if (!migration)
          throw new Error(`the database has migration ${row.name}, which this code does not have (in ${dir})`)
        if (migration.checksum !== row.checksum)
          throw new Error(
            `migration ${row.name} was changed after it was applied: migrations are forward only`,
          )
      }
      const done = new Set(applied.rows.map((r) => r.name))
      const pending = migrations.filter((m) => !done.has(m.name))
      try {
        for (const migration of pending)
          await conn.transaction().execute(async (trx) => {
            await sql.raw(migration.sql).execute(trx)
            await sql`insert into schema_migrations (name, checksum) values (${migration.name}, ${migration.checksum})`.execute(
              trx,
            )
          })
      } finally {
        // statements this process prepared before may no longer fit the tables, and the columns
        // that `*` is written out as are read again (PostgreSQL)
        if (pending.length) await database.schemaChanged()
      }
      return pending.map((m) => m.name)
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${lockKey}))`.execute(conn)
    }
  })
}
