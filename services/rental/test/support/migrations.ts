import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type Database, migrate } from '@svc/kit'
import { tempFolder } from '@svc/kit/testing'

const MIGRATIONS = fileURLToPath(new URL('../../migrations', import.meta.url))

/**
 * Applies the rental's migrations up to `last` (its file name, included) to `database`: a
 * migration's test fills the tables as they stood before it, then migrates up to it and looks.
 */
export async function migrateUpTo(database: Database, last: string): Promise<void> {
  const files = Object.fromEntries(
    readdirSync(MIGRATIONS)
      .filter((name) => name.endsWith('.sql') && name <= last)
      .map((name) => [name, readFileSync(`${MIGRATIONS}/${name}`, 'utf8')]),
  )
  await migrate(database, tempFolder(files))
}
