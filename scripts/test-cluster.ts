/**
 * `npm run test:cluster`: the cluster suite (scripts/cluster/*.cluster.ts), which `npm test` does
 * not run. It needs PostgreSQL (DATABASE_URL), Redis (REDIS_URL) and nginx; without one of them
 * it says so and exits 0. Its own Redis database (CLUSTER_REDIS_DB, 9 by default) keeps the
 * cluster's keys apart from a running `npm start`'s.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { repoRoot } from '../packages/kit/src/paths.ts'
import { findNginx, NGINX_MISSING } from './cluster/cluster.ts'

const root = repoRoot()
const missing = [
  ...(process.env.DATABASE_URL ? [] : ['DATABASE_URL (PostgreSQL)']),
  ...(process.env.REDIS_URL ? [] : ['REDIS_URL (Redis)']),
]
if (missing.length) {
  console.log(`cluster suite skipped: set ${missing.join(' and ')}`)
  process.exit(0)
}
if (!findNginx()) {
  console.log(`cluster suite skipped: ${NGINX_MISSING}`)
  process.exit(0)
}
const redis = new URL(process.env.REDIS_URL!)
redis.pathname = `/${process.env.CLUSTER_REDIS_DB ?? '9'}`
const dir = join(root, 'scripts', 'cluster')
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.cluster.ts'))
  .map((f) => relative(root, join(dir, f)))
// the pids of the services and nginx the suite starts: any still running when it ends (its process
// was killed by a time limit) are ended here, each checked to be one of ours by its command line
const pidsDir = mkdtempSync(join(tmpdir(), 'svc-cluster-pids-'))
const pidsFile = join(pidsDir, 'pids')
const started = Date.now()
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    '--test-concurrency=1',
    '--test-timeout=330000',
    ...files,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      LOG_LEVEL: 'error',
      ...process.env,
      NODE_ENV: 'test',
      CLUSTER_REDIS_URL: redis.toString(),
      CLUSTER_PIDS_FILE: pidsFile,
    },
  },
)
function endLeftovers() {
  const pids = existsSync(pidsFile) ? readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean) : []
  for (const pid of pids) {
    let command = ''
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    } catch {
      continue
    }
    if (!command.includes('.build/main.mjs') && !command.includes('svc-cluster-')) continue
    try {
      process.kill(Number(pid), 'SIGKILL')
      console.log(`cluster suite: ended a leftover process ${pid}`)
    } catch {}
  }
  rmSync(pidsDir, { recursive: true, force: true })
}
process.on('SIGTERM', () => child.kill('SIGTERM'))
child.on('exit', (code, signal) => {
  endLeftovers()
  console.log(`cluster suite: ${((Date.now() - started) / 1000).toFixed(0)}s`)
  process.exit(code ?? (signal ? 1 : 0))
})
