import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root: the nearest folder above this file holding the workspace's package-lock.json. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package-lock.json'))) {
    const parent = resolve(dir, '..')
    if (parent === dir) return process.cwd()
    dir = parent
  }
  return dir
}
