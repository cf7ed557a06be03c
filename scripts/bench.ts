/** `npm run bench`: runs every benchmark in bench/ and prints its figures. Nothing here passes or fails on time. */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../packages/kit/src/paths.ts'

const dir = join(repoRoot(), 'bench')
const only = process.argv[2]
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts') && (!only || f.includes(only)))
  .sort()) {
  console.log(`\n== ${file}`)
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(dir, file)], {
    stdio: 'inherit',
    env: { LOG_LEVEL: 'silent', ...process.env },
  })
  if (run.status !== 0) process.exit(run.status ?? 1)
}
