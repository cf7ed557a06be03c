/**
 * `npm start`: every service as a child process on the embedded database, each awaited until
 * ready, then a table of URLs and resident memory. Ctrl-C stops them all; if one dies, its last
 * log lines are printed and the others are stopped.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { DEV_IDP_ADMIN_TOKEN_FILE, devIdpAdminToken } from '../packages/kit/src/dev-secrets.ts'
import { repoRoot } from '../packages/kit/src/paths.ts'
import { readTopology, SERVICE_NAMES, type ServiceName } from '../packages/kit/src/topology.ts'
import { bundleService } from './build.ts'

/** How long a service may take to become ready; START_READY_TIMEOUT_S for a slow or busy machine. */
const READY_TIMEOUT_MS = (Number(process.env.START_READY_TIMEOUT_S) || 90) * 1000
const LOG_TAIL = 30

interface Child {
  name: ServiceName
  process: ChildProcess
  tail: string[]
  notes: string[]
  /** The service logged that its start is complete (every banner line is in `notes`). */
  started: boolean
  /** The service said it cannot become ready without a change of configuration (`blocked` in its log). */
  blocked?: string
  exited: Promise<number>
}

const started = Date.now()
const topology = readTopology()
const children: Child[] = []
let stopping = false

function residentMb(pid: number | undefined): string {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1])
    return kb ? `${Math.round(kb / 1024)} MB` : '?'
  } catch {
    return '?'
  }
}

/** Keeps the last lines for a post-mortem, prints warnings and errors as they come, collects banner lines. */
function follow(child: Child, stream: NodeJS.ReadableStream) {
  createInterface({ input: stream }).on('line', (line) => {
    child.tail.push(line)
    if (child.tail.length > LOG_TAIL) child.tail.shift()
    let entry:
      | {
          level?: number
          msg?: string
          banner?: boolean
          started?: boolean
          blocked?: boolean
          err?: unknown
        }
      | undefined
    try {
      entry = JSON.parse(line)
    } catch {}
    if (!entry) {
      if (line.trim()) console.log(`[${child.name}] ${line}`)
      return
    }
    if (entry.started) child.started = true
    if (entry.blocked && entry.msg) child.blocked = entry.msg
    if (entry.banner && entry.msg) child.notes.push(entry.msg)
    else if ((entry.level ?? 0) >= 40)
      console.log(`[${child.name}] ${entry.msg ?? ''} ${entry.err ? JSON.stringify(entry.err) : ''}`)
  })
}

function launch(name: ServiceName, entry: string): Child {
  const proc = spawn(process.execPath, ['--enable-source-maps', entry], {
    cwd: repoRoot(),
    env: { NODE_ENV: 'development', ...process.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const child: Child = {
    name,
    process: proc,
    tail: [],
    notes: [],
    started: false,
    exited: new Promise((resolve) => proc.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))),
  }
  follow(child, proc.stdout!)
  follow(child, proc.stderr!)
  void child.exited.then((code) => {
    if (stopping) return
    console.error(`\n${name} exited (code ${code}). Its last log lines:\n${child.tail.join('\n')}\n`)
    void stopAll(1)
  })
  return child
}

async function waitReady(child: Child): Promise<void> {
  const url = `http://127.0.0.1:${topology[child.name].port}/readyz`
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) throw new Error(`${child.name} exited before it was ready`)
    if (child.blocked) throw new Error(`${child.name} cannot become ready: ${child.blocked}`)
    try {
      if ((await fetch(url)).ok) {
        // its banner lines may still be in the pipe: wait for the line that follows them (a quiet
        // LOG_LEVEL never prints it, so not for long)
        const settled = Date.now() + 5_000
        while (!child.started && Date.now() < settled) await new Promise((r) => setTimeout(r, 50))
        return
      }
    } catch {}
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`${child.name} was not ready within ${READY_TIMEOUT_MS / 1000}s`)
}

async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true
    for (const c of children) if (c.process.exitCode === null) c.process.kill('SIGTERM')
    const killer = setTimeout(() => {
      for (const c of children) if (c.process.exitCode === null) c.process.kill('SIGKILL')
    }, 15_000)
    await Promise.all(children.map((c) => c.exited))
    clearTimeout(killer)
    console.log('all services stopped')
  }
  process.exit(code)
}

process.on('SIGINT', () => void stopAll(0))
process.on('SIGTERM', () => void stopAll(0))

const dataDir = resolve(repoRoot(), process.env.DATA_DIR ?? '.data')

/**
 * The idp started here takes IDP_ADMIN_TOKEN, else the development token in the data directory;
 * the rental takes RENTAL_IDP_ADMIN_TOKEN, else those two. Only a RENTAL_IDP_ADMIN_TOKEN of its own
 * can set them apart, and the rental could never register its client: said now, not after 90 s.
 */
function adminTokenMismatch(): string | undefined {
  const rental = process.env.RENTAL_IDP_ADMIN_TOKEN
  if (!rental || process.env.RENTAL_CLIENT_ID) return undefined
  const idp = process.env.IDP_ADMIN_TOKEN
  if (idp !== undefined)
    return rental === idp
      ? undefined
      : 'RENTAL_IDP_ADMIN_TOKEN and IDP_ADMIN_TOKEN are set to different values: the idp would refuse the rental. Unset RENTAL_IDP_ADMIN_TOKEN (IDP_ADMIN_TOKEN alone serves both) or give it the same value.'
  if (rental === devIdpAdminToken(dataDir)) return undefined
  return `RENTAL_IDP_ADMIN_TOKEN is set to a token the idp does not use: with IDP_ADMIN_TOKEN unset, the idp takes the development token in ${join(dataDir, DEV_IDP_ADMIN_TOKEN_FILE)}, and would refuse the rental. Unset RENTAL_IDP_ADMIN_TOKEN, or set IDP_ADMIN_TOKEN to the same value.`
}

const mismatch = adminTokenMismatch()
if (mismatch) {
  console.error(mismatch)
  process.exit(1)
}

const entries = await Promise.all(SERVICE_NAMES.map(bundleService))
SERVICE_NAMES.forEach((name, i) => {
  children.push(launch(name, entries[i]!))
})
try {
  await Promise.all(children.map(waitReady))
} catch (err) {
  if (stopping) await new Promise(() => {})
  console.error(`${(err as Error).message}`)
  for (const c of children) console.error(`\n--- ${c.name}, last log lines:\n${c.tail.join('\n')}`)
  await stopAll(1)
}

/**
 * The demo notes MCP server (the agents' `/tools/notes/mcp`) registered at the idp as a resource
 * (RFC 8707), so that the rental's connections reach it with `auth: {type: "idp_resource"}`: its
 * identifier as its RFC 9728 metadata names it, through the idp's management API with the admin
 * token the services share (IDP_ADMIN_TOKEN, else the development one in the data directory).
 * Idempotent: at a restart the idp answers 409, already registered.
 */
async function registerNotesResource(): Promise<string> {
  const agents = topology.agents.url.replace(/\/+$/, '')
  const metadata = await fetch(`${agents}/.well-known/oauth-protected-resource/tools/notes/mcp`, {
    signal: AbortSignal.timeout(10_000),
  })
  if (!metadata.ok) throw new Error(`the notes server's metadata answered ${metadata.status}`)
  const { resource, resource_name: name } = (await metadata.json()) as {
    resource: string
    resource_name: string
  }
  const adminToken = process.env.IDP_ADMIN_TOKEN ?? devIdpAdminToken(dataDir)
  const res = await fetch(`${topology.idp.url.replace(/\/+$/, '')}/manage/v1/resources`, {
    method: 'POST',
    headers: { 'x-admin-token': adminToken, 'content-type': 'application/json' },
    body: JSON.stringify({ identifier: resource, name, mcp: true }),
    signal: AbortSignal.timeout(10_000),
  })
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`the idp answered ${res.status} to the registration of ${resource}: ${await res.text()}`)
  return `demo notes MCP server ${resource} ${res.status === 201 ? 'registered' : 'already registered'} at the idp as a resource (connect it with auth idp_resource)`
}

const demoNotes = await registerNotesResource().catch(
  (err: Error) => `the demo notes MCP server is not registered at the idp: ${err.message}`,
)

const rows = [
  ...children.map((c) => [c.name, topology[c.name].url, String(c.process.pid), residentMb(c.process.pid)]),
  ['(npm start)', '', String(process.pid), residentMb(process.pid)],
]
const header = ['service', 'url', 'pid', 'resident']
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')
console.log(`\nAll services ready in ${((Date.now() - started) / 1000).toFixed(1)}s\n`)
console.log(line(header))
for (const r of rows) console.log(line(r))
const total = rows.reduce((sum, r) => sum + (Number.parseInt(r[3]!, 10) || 0), 0)
console.log(`${'total'.padEnd(widths[0]! + widths[1]! + widths[2]! + 6)}${total} MB`)
for (const c of children) for (const note of c.notes) console.log(`\n${c.name}: ${note}`)
console.log(`\nagents: ${demoNotes}`)
console.log('\nPress Ctrl-C to stop.')
