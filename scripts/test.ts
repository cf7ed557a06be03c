/**
 * Runs every *.test.ts file with node's test runner through tsx (Node 20 expands no globs).
 * `npm test -- services/idp` runs the files under the given paths only.
 * With DATABASE_URL and REDIS_URL set, the same suites run against PostgreSQL and Redis.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { prepareSnapshot } from '../packages/kit/src/db/snapshot.ts'
import { repoRoot } from '../packages/kit/src/paths.ts'

const root = repoRoot()
const SKIP = new Set(['node_modules', '.data', '.build', '.git', 'scratch'])

function findTests(path: string): string[] {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : []
  return readdirSync(path)
    .filter((name) => !SKIP.has(name))
    .flatMap((name) => findTests(join(path, name)))
}

/**
 * The longest files start first (two run at a time), so that none is left running alone at the
 * end; the others keep their order. Measured with the spec reporter's per-file durations.
 */
const LONGEST_FIRST = [
  'services/rental/test/sweep-bad-input.test.ts',
  'services/rental/test/batches.test.ts',
  'scripts/start.test.ts',
  'services/rental/test/sweep-auth.test.ts',
  'services/rental/test/webconsole-client.test.ts',
  'services/rental/test/webconsole-tenant.test.ts',
  'services/rental/test/webconsole.test.ts',
  'services/rental/test/webhooks.test.ts',
  'services/rental/test/refunds.test.ts',
  'services/rental/test/connect.test.ts',
]
const rank = (file: string) => {
  const at = LONGEST_FIRST.indexOf(file)
  return at < 0 ? LONGEST_FIRST.length : at
}

const given = process.argv.slice(2)
const files = (
  given.length
    ? given.map((p) => join(root, p))
    : ['packages', 'services', 'scripts'].map((p) => join(root, p))
)
  .flatMap(findTests)
  .map((f) => relative(root, f))
  .sort()
  .sort((a, b) => rank(a) - rank(b))
if (files.length === 0) {
  console.error('no test files found')
  process.exit(1)
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
const child = spawn(
  process.execPath,
  // test-preload: the harness's async hook without its per-promise cost (see the file)
  [
    '--import',
    'tsx',
    '--import',
    pathToFileURL(join(root, 'scripts/test-preload.ts')).href,
    '--test',
    '--test-reporter=spec',
    '--test-concurrency=2',
    ...files,
  ],
  { cwd: root, stdio: 'inherit', env: { LOG_LEVEL: 'error', ...process.env, NODE_ENV: 'test' } },
)
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
