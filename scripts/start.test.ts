import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { repoRoot } from '../packages/kit/src/paths.ts'
import { restartablePorts, tempFolder } from '../packages/kit/src/testing.ts'

const SERVICES = ['idp', 'ledger', 'rental', 'agents'] as const

/** `npm start` as a user runs it, on the embedded database whatever the suite's backend, on free ports. */
function npmStart(dataDir: string, basePort: number, extra: Record<string, string> = {}) {
  // the suite runs beside other files on two cores: a fresh embedded database may take minutes there
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    START_READY_TIMEOUT_S: '360',
  }
  for (const key of [
    'DATABASE_URL',
    'REDIS_URL',
    'NODE_ENV',
    'IDP_URL',
    'LEDGER_URL',
    'RENTAL_URL',
    'AGENTS_URL',
    'IDP_ADMIN_TOKEN',
    'RENTAL_IDP_ADMIN_TOKEN',
  ])
    delete env[key]
  Object.assign(env, extra)
  SERVICES.forEach((s, i) => {
    env[`${s.toUpperCase()}_PORT`] = String(basePort + i)
  })
  // the command of package.json's start script (npm itself exits on Ctrl-C without waiting), in its own
  // process group, so a signal reaches the supervisor and the services as Ctrl-C in a terminal would
  const script = JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')).scripts.start as string
  const child = spawn('sh', ['-c', `exec ${script}`], {
    cwd: repoRoot(),
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (d) => {
    output += d
  })
  child.stderr!.on('data', (d) => {
    output += d
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, exited, output: () => output }
}

async function until(check: () => boolean, what: string, timeoutMs = 420_000) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const untilReady = (run: ReturnType<typeof npmStart>) =>
  until(
    () => run.output().includes('Press Ctrl-C to stop.') || run.child.exitCode !== null,
    'the ready table',
  )

const ports = (base: number) => SERVICES.map((_, i) => base + i)
const answers = (port: number, path: string) =>
  fetch(`http://127.0.0.1:${port}${path}`).then(
    (r) => r.status,
    () => 0,
  )

describe('npm start', () => {
  const dataDir = join(tempFolder(), 'data')
  const started: ChildProcess[] = []
  after(() => {
    for (const c of started)
      try {
        if (c.pid) process.kill(-c.pid, 'SIGKILL')
      } catch {}
  })

  // the second start reuses the first one's ports: the demo registrations find themselves done.
  // The ports lie below the ephemeral range, where no outgoing connection of another test takes them.
  let firstBase: number | undefined

  it('brings every service to ready, prints their URLs and memory, and stops them all on Ctrl-C', async (t) => {
    const base = await restartablePorts(SERVICES.length)
    firstBase = base
    const run = npmStart(dataDir, base)
    started.push(run.child)
    await untilReady(run)
    const out = run.output()
    assert.match(out, /All services ready in [\d.]+s/, out)
    for (const [i, s] of SERVICES.entries())
      assert.match(out, new RegExp(`${s}\\s+http://127\\.0\\.0\\.1:${base + i}\\s+\\d+\\s+\\d+ MB`))
    assert.match(out, /idp: development admin token \(X-Admin-Token\): \S{20,}/)
    assert.match(out, /idp: demo sign-in at http:\/\/127\.0\.0\.1:\d+\/ui\/login: demo@svc\.local \/ \S{8,}/)
    // the demo notes MCP server is a resource at the idp: the rental's idp_resource connections reach it
    const notes = `http://127.0.0.1:${base + 3}/tools/notes/mcp`
    assert.ok(out.includes(`agents: demo notes MCP server ${notes} registered at the idp`), out)
    const adminToken = /development admin token \(X-Admin-Token\): (\S+)/.exec(out)![1]!
    const listed = await fetch(`http://127.0.0.1:${base}/manage/v1/resources`, {
      headers: { 'x-admin-token': adminToken },
    })
    const { resources } = (await listed.json()) as { resources: Array<{ identifier: string; mcp: boolean }> }
    assert.deepEqual(
      resources.filter((r) => r.identifier === notes).map((r) => r.mcp),
      [true],
    )
    t.diagnostic(out.slice(out.indexOf('All services ready')).split('\n').slice(0, 9).join('\n'))
    for (const port of ports(base)) {
      assert.equal(await answers(port, '/readyz'), 200)
      assert.equal(await answers(port, '/openapi.json'), 200)
    }
    for (const s of ['idp', 'ledger', 'rental'])
      assert.ok(existsSync(join(dataDir, s, 'PG_VERSION')), `${s} data`)
    assert.ok(!existsSync(join(dataDir, 'agents')), 'the agents keep no database')

    process.kill(-run.child.pid!, 'SIGINT')
    assert.equal(await run.exited, 0, run.output())
    assert.match(run.output(), /all services stopped/)
    for (const port of ports(base)) assert.equal(await answers(port, '/healthz'), 0, `port ${port} closed`)
    assert.deepEqual(
      readdirSync(dataDir).filter((f) => f.endsWith('.lock')),
      [],
      'every database lock released',
    )
  })

  it('gives every service IDP_ADMIN_TOKEN from the shell; stops everything and shows the last log lines when a service dies', async () => {
    const base = firstBase ?? (await restartablePorts(SERVICES.length))
    // not the development token the first start made: the rental must register with the idp's (issue 30)
    const run = npmStart(dataDir, base, { IDP_ADMIN_TOKEN: `shell-${randomBytes(12).toString('hex')}` })
    started.push(run.child)
    await untilReady(run)
    if (firstBase)
      assert.match(run.output(), /agents: demo notes MCP server \S+ already registered at the idp/)
    const pid = Number(/ledger\s+\S+\s+(\d+)/.exec(run.output())?.[1])
    assert.ok(pid > 0, run.output())
    process.kill(pid, 'SIGKILL')
    assert.equal(await run.exited, 1)
    assert.match(run.output(), /ledger exited \(code 1\)\. Its last log lines:\n.*"service":"ledger"/)
    for (const port of ports(base)) assert.equal(await answers(port, '/healthz'), 0, `port ${port} closed`)
  })

  it('refuses at once a RENTAL_IDP_ADMIN_TOKEN the idp would refuse, saying which and what to do', async () => {
    const run = npmStart(dataDir, await restartablePorts(SERVICES.length), {
      IDP_ADMIN_TOKEN: `shell-${randomBytes(12).toString('hex')}`,
      RENTAL_IDP_ADMIN_TOKEN: `other-${randomBytes(12).toString('hex')}`,
    })
    started.push(run.child)
    assert.equal(await run.exited, 1)
    assert.match(
      run.output(),
      /RENTAL_IDP_ADMIN_TOKEN and IDP_ADMIN_TOKEN are set to different values: the idp would refuse the rental\. Unset RENTAL_IDP_ADMIN_TOKEN/,
    )
    assert.doesNotMatch(run.output(), /All services ready|not ready within/, 'no service was started')
  })
})
