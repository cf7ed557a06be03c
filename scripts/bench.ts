/**
 * `npm run bench [-- NAME]`: runs every *.bench.ts in bench/ and services/<name>/bench/ and prints
 * their figures. Nothing here passes or fails on time.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { repoRoot } from '../packages/kit/src/paths.ts'

const root = repoRoot()
const dirs = [
  join(root, 'bench'),
  ...readdirSync(join(root, 'services')).map((s) => join(root, 'services', s, 'bench')),
]
const only = process.argv[2]
const files = dirs
  .filter((dir) => existsSync(dir))
  .flatMap((dir) => readdirSync(dir).map((f) => join(dir, f)))
  .filter((f) => f.endsWith('.bench.ts') && (!only || f.includes(only)))
for (const file of files) {
  console.log(`\n== ${relative(root, file)}`)
  const run = spawnSync(process.execPath, ['--import', 'tsx', file], {
    stdio: 'inherit',
    env: { LOG_LEVEL: 'silent', ...process.env },
  })
  if (run.status !== 0) process.exit(run.status ?? 1)
}
