/**
 * Runs every *.test.ts file with node's test runner through tsx (Node 20 expands no globs).
 * `npm test -- services/idp` runs the files under the given paths only.
 * With DATABASE_URL and REDIS_URL set, the same suites run against PostgreSQL and Redis.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { prepareSnapshot } from '../packages/kit/src/db/snapshot.ts'
import { repoRoot } from '../packages/kit/src/paths.ts'
import { alive } from '../packages/kit/src/process.ts'
import { bundleTests } from './build.ts'

const root = repoRoot()
const SKIP = new Set(['node_modules', '.data', '.build', '.git', 'scratch'])

function findTests(path: string): string[] {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : []
  return readdirSync(path)
    .filter((name) => !SKIP.has(name))
    .flatMap((name) => findTests(join(path, name)))
}

/**
 * The longest files start first (three run at a time: TEST_CONCURRENCY), so that none is left
 * running alone at the end; the others keep their order. The order is the slowest-files list a CI
 * run printed (scripts/test-times.ts, PostgreSQL and Redis, 2026-11-29): the three fault files (they
 * run in a lane of their own, WAITING below), then the CLI's, the browser files, `npm start`, the
 * SDK's and the sweeps, 55 down to 12 s each; after them the earlier list's files not in the top 25.
 */
const LONGEST_FIRST = [
  'services/rental/test/tasks/task-faults-agents.test.ts',
  'services/rental/test/tasks/task-faults-kill.test.ts',
  'services/rental/test/tasks/task-faults-database.test.ts',
  'packages/cli/test/cli.test.ts',
  'services/rental/test/webconsole/webconsole-journey.test.ts',
  'services/rental/test/webconsole/webconsole-layout.test.ts',
  'scripts/start.test.ts',
  'packages/client/test/sdk.test.ts',
  'services/rental/test/service/sweep-bad-input.test.ts',
  'services/idp/test/ui/design.test.ts',
  'services/rental/test/webconsole/webconsole-controls.test.ts',
  'services/rental/test/webconsole/webconsole-client.test.ts',
  'services/rental/test/webconsole/webconsole-arabic.test.ts',
  'services/rental/test/service/sweep-auth.test.ts',
  'services/rental/test/webconsole/webconsole-names.test.ts',
  'packages/cli/test/mcp.test.ts',
  'packages/kit/src/jobs.test.ts',
  'services/rental/test/tasks/agent-cancel.test.ts',
  'services/rental/test/auth/bearer.test.ts',
  'services/rental/test/webconsole/webconsole.test.ts',
  'services/rental/test/webconsole/webconsole-teams.test.ts',
  'services/rental/test/webhooks/webhooks.test.ts',
  'services/rental/test/webconsole/webconsole-tenant.test.ts',
  'services/rental/test/retention/retention.test.ts',
  'services/rental/test/connect/connect.test.ts',
  'scripts/openapi.test.ts',
  'services/rental/test/tasks/task-ops.test.ts',
  'services/rental/test/batches/batches.test.ts',
  'services/ledger/test/log/crash.test.ts',
  'services/rental/test/webconsole/webconsole-design.test.ts',
  'services/rental/test/refunds/refunds.test.ts',
  'services/rental/test/connect/connect-idp.test.ts',
  'services/rental/test/auth/step-up.test.ts',
  'services/rental/test/engagements/capacity.test.ts',
  'services/rental/test/disputes/disputes.test.ts',
  'services/rental/test/approvals/approvals.test.ts',
  'services/idp/test/service/sweep-bad-input.test.ts',
  'services/rental/test/engagements/engagements.test.ts',
  'services/ledger/test/log/log.test.ts',
  'services/rental/test/a2a/a2a.test.ts',
]
const rank = (file: string) => {
  const at = LONGEST_FIRST.indexOf(file)
  return at < 0 ? LONGEST_FIRST.length : at
}

/**
 * `--backend-files`: only the files whose subject is the backend: those that name one (they read
 * DATABASE_URL, REDIS_URL or `onPostgres`), the kit's and trust's own tests, and the main path of
 * the idp and of the rental. CI runs every file on PostgreSQL and Redis, and these again on
 * PGlite and the memory kv (docs/performance.md, CI under 15 minutes).
 */
const MAIN_PATHS = new Set([
  'services/idp/test/authorize/code-flow.test.ts',
  'services/rental/test/engagements/engagements.test.ts',
])
const NAMES_A_BACKEND = /\bonPostgres\b|\bDATABASE_URL\b|\bREDIS_URL\b/
const concernsTheBackend = (file: string) =>
  /^packages\/(kit|trust)\//.test(file) ||
  MAIN_PATHS.has(file) ||
  NAMES_A_BACKEND.test(readFileSync(join(root, file), 'utf8'))

const backendFilesOnly = process.argv.includes('--backend-files')
const listOnly = process.argv.includes('--list')
const given = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const files = (
  given.length
    ? given.map((p) => join(root, p))
    : ['packages', 'services', 'scripts'].map((p) => join(root, p))
)
  .flatMap(findTests)
  .map((f) => relative(root, f))
  .sort()
  .sort((a, b) => rank(a) - rank(b))
  .filter((file) => !backendFilesOnly || concernsTheBackend(file))
if (files.length === 0) {
  console.error('no test files found')
  process.exit(1)
}

if (listOnly) {
  console.log(files.join('\n'))
  process.exit(0)
}
const backend = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'
const kv = process.env.REDIS_URL ? 'Redis' : 'memory kv'
console.log(`${files.length} test files on ${backend} and ${kv}`)
// each service's migrated snapshot, made once here rather than by test processes racing for it
if (!process.env.DATABASE_URL)
  for (const service of readdirSync(join(root, 'services'))) {
    const migrations = join(root, 'services', service, 'migrations')
    if (existsSync(migrations)) await prepareSnapshot(service, migrations)
  }
// TEST_TSX=1 runs the TypeScript through tsx as written, unbundled
const viaTsx = process.env.TEST_TSX === '1'
const preload = 'scripts/test-preload.ts'
const timesReporter = 'scripts/test-times.ts'
// each run bundles into a folder of its own, so that two runs at once do not share one
const runs = join(root, '.build', 'test')
const outdir = join(runs, String(process.pid))
for (const run of existsSync(runs) ? readdirSync(runs) : [])
  if (!alive(Number(run))) rmSync(join(runs, run), { recursive: true, force: true })
const bundled = viaTsx ? undefined : await bundleTests([preload, timesReporter, ...files], outdir)
const run = (file: string) => bundled?.get(file) ?? file
/**
 * Files whose time is waiting by design (an outage of a minute, a black-holed database, heartbeats
 * going stale, retries): they hold a slot of the three while the CPU idles. They run beside the
 * others, one at a time in a lane of their own (`TEST_SIDE_LANE=0` puts them back among the
 * others, as does `TEST_CONCURRENCY=1`); their report is printed when that lane ends.
 */
const WAITING = new Set([
  'services/rental/test/tasks/task-faults-agents.test.ts',
  'services/rental/test/tasks/task-faults-kill.test.ts',
  'services/rental/test/tasks/task-faults-database.test.ts',
])
const concurrency = process.env.TEST_CONCURRENCY ?? '3'
const sideLane =
  process.env.TEST_SIDE_LANE !== '0' && Number(concurrency) > 1 ? files.filter((f) => WAITING.has(f)) : []
const mainLane = files.filter((f) => !sideLane.includes(f))
const runLane = (lane: string[], concurrency: string, buffered: boolean) =>
  new Promise<{ code: number; output: Buffer[] }>((resolve) => {
    const child = spawn(
      process.execPath,
      // test-preload: the harness's async hook without its per-promise cost (see the file)
      [
        ...(viaTsx ? ['--import', 'tsx'] : ['--enable-source-maps']),
        '--import',
        pathToFileURL(join(root, run(preload))).href,
        '--test',
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        // the slowest files, from the bundled reporter (Node loads a reporter without tsx's hooks)
        ...(bundled
          ? [
              `--test-reporter=${pathToFileURL(join(root, run(timesReporter))).href}`,
              '--test-reporter-destination=stdout',
            ]
          : []),
        `--test-concurrency=${concurrency}`,
        ...lane.map(run),
      ],
      {
        cwd: root,
        stdio: buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit',
        env: { LOG_LEVEL: 'error', ...process.env, NODE_ENV: 'test' },
      },
    )
    const output: Buffer[] = []
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk))
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk))
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }))
  })
const began = Date.now()
const minutes = (ms: number) => `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
const side = sideLane.length
  ? runLane(sideLane, '1', mainLane.length > 0).then((lane) => ({ ...lane, ms: Date.now() - began }))
  : undefined
const main = mainLane.length ? await runLane(mainLane, concurrency, false) : undefined
const mainMs = Date.now() - began
const waited = await side
if (waited?.output.length) {
  console.log(`\nthe files that wait by design, run beside the others (${sideLane.length}):`)
  process.stdout.write(Buffer.concat(waited.output))
}
console.log(
  `\n${files.length} files on ${backend} and ${kv}: the main lane took ${minutes(mainMs)}` +
    (waited ? `, the waiting lane ${minutes(waited.ms)}` : ''),
)
rmSync(outdir, { recursive: true, force: true })
process.exit(main?.code || waited?.code || 0)
