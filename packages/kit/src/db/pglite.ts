import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { repoRoot } from '../paths.ts'
import { parsers } from './types.ts'

// PostgreSQL's 128 MB default is sized for a server; the embedded database serves one process.
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB']

/**
 * initdb leaves ~800 MB resident in the process that runs it, so it runs in a short-lived child:
 * the service then opens the finished directory at a fraction of that.
 */
function runInChild(script: string, arg: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, arg], {
      cwd: repoRoot(),
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`embedded database setup failed (${code}): ${stderr.slice(-2000)}`)),
    )
  })
}

const INIT_DIR = `import { PGlite } from '@electric-sql/pglite'
const db = await PGlite.create({ dataDir: process.argv[1] })
await db.close()`

const DUMP_TEMPLATE = `import { PGlite } from '@electric-sql/pglite'
import { writeFileSync, renameSync } from 'node:fs'
const db = await PGlite.create()
const tar = await db.dumpDataDir('none')
const tmp = process.argv[1] + '.' + process.pid
writeFileSync(tmp, Buffer.from(await tar.arrayBuffer()))
renameSync(tmp, process.argv[1])`

/** A freshly initialised cluster, dumped once and loaded by every in-memory database (tests). */
async function template(): Promise<Blob> {
  const path = join(repoRoot(), '.data', `pglite-template-${versionTag()}.tar`)
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true })
    await runInChild(DUMP_TEMPLATE, path)
  }
  return new Blob([readFileSync(path)])
}

function versionTag(): string {
  const pkg = join(repoRoot(), 'node_modules', '@electric-sql', 'pglite', 'package.json')
  return existsSync(pkg) ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version : 'unknown'
}

/** Opens PGlite on a data directory (created on first use), or in memory from the template. */
export async function createPGlite(dataDir: string | undefined): Promise<PGlite> {
  if (!dataDir) return PGlite.create({ loadDataDir: await template(), parsers, startParams: START_PARAMS })
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    const partial = `${dataDir}.init`
    await runInChild(INIT_DIR, partial)
    renameSync(partial, dataDir)
  }
  return PGlite.create({ dataDir, parsers, startParams: START_PARAMS })
}
