import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { repoRoot } from '../paths.ts'
import { parsers } from './types.ts'

// PostgreSQL's 128 MB default is sized for a server; the embedded database serves one process.
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB']

/**
 * initdb leaves ~800 MB resident in the process that runs it, so it runs once, in a short-lived
 * child that dumps the cluster it made: data directories and in-memory databases start from that.
 */
function runInChild(script: string, ...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...args], {
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

const DUMP_TEMPLATE = `import { PGlite } from '@electric-sql/pglite'
import { writeFileSync, renameSync } from 'node:fs'
const db = await PGlite.create()
const tar = await db.dumpDataDir('none')
const tmp = process.argv[1] + '.' + process.pid
writeFileSync(tmp, Buffer.from(await tar.arrayBuffer()))
renameSync(tmp, process.argv[1])`

const UNPACK_TEMPLATE = `import { PGlite } from '@electric-sql/pglite'
import { readFileSync } from 'node:fs'
const db = await PGlite.create({ dataDir: process.argv[1], loadDataDir: new Blob([readFileSync(process.argv[2])]) })
await db.close()`

async function templatePath(): Promise<string> {
  const path = join(repoRoot(), '.data', `pglite-template-${versionTag()}.tar`)
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true })
    await runInChild(DUMP_TEMPLATE, path)
  }
  return path
}

/** A freshly initialised cluster, dumped once: every new database, in memory or on disk, starts from it. */
export async function template(): Promise<Blob> {
  return new Blob([readFileSync(await templatePath())])
}

const pgliteDist = () => join(repoRoot(), 'node_modules', '@electric-sql', 'pglite', 'dist')

export function versionTag(): string {
  const pkg = join(pgliteDist(), '..', 'package.json')
  return existsSync(pkg) ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version : 'unknown'
}

let runtime: Promise<{ pgliteWasmModule: WebAssembly.Module; fsBundle: Blob }> | undefined
// @types/node declares WebAssembly's types only
const wasm = (
  globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }
).WebAssembly

/**
 * PGlite's WebAssembly, compiled once per process, and its file bundle, read once: without them
 * every database compiles the 9 MB module again (a test stack opens three or four).
 */
function sharedRuntime() {
  runtime ??= (async () => ({
    pgliteWasmModule: await wasm.compile(readFileSync(join(pgliteDist(), 'pglite.wasm'))),
    fsBundle: new Blob([readFileSync(join(pgliteDist(), 'pglite.data'))]),
  }))()
  return runtime
}

/**
 * Opens PGlite on a data directory (created on first use), or in memory from `snapshot` (a
 * dumped data directory) or else from the empty template.
 */
export async function createPGlite(dataDir: string | undefined, snapshot?: Blob): Promise<PGlite> {
  const common = { ...(await sharedRuntime()), parsers, startParams: START_PARAMS }
  if (!dataDir) return PGlite.create({ ...common, loadDataDir: snapshot ?? (await template()) })
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    // the template unpacked (the same cluster initdb would make, without initdb's cost), in a
    // child: a second PGlite in this process would leave its memory resident (~400 MB at rest)
    const partial = `${dataDir}.init`
    rmSync(partial, { recursive: true, force: true })
    await runInChild(UNPACK_TEMPLATE, partial, await templatePath())
    renameSync(partial, dataDir)
  }
  return PGlite.create({ ...common, dataDir })
}
