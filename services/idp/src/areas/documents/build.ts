import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'

/** The repository's root: the nearest folder above this module (source or bundle) with the lockfile. */
function findRoot() {
  let dir = new URL('./', import.meta.url)
  for (let i = 0; i < 8; i++) {
    if (existsSync(new URL('package-lock.json', dir)) && existsSync(new URL('services/', dir))) return dir
    dir = new URL('../', dir)
  }
  return new URL('./', import.meta.url)
}
const ROOT = findRoot()
const STARTED_AT = new Date().toISOString()

/** The checkout's HEAD, read from .git without running git; 'unknown' outside a checkout. */
function checkoutCommit() {
  try {
    const head = readFileSync(new URL('.git/HEAD', ROOT), 'utf8').trim()
    if (!head.startsWith('ref: ')) return head
    const ref = head.slice(5)
    const loose = new URL(`.git/${ref}`, ROOT)
    if (existsSync(loose)) return readFileSync(loose, 'utf8').trim()
    const packed = readFileSync(new URL('.git/packed-refs', ROOT), 'utf8')
    return (
      packed
        .split('\n')
        .find((line) => line.endsWith(` ${ref}`))
        ?.split(' ')[0] ?? 'unknown'
    )
  } catch {
    return 'unknown'
  }
}

/**
 * What was built: the commit (as the build says, or the checkout's HEAD), the lockfile's SHA-256
 * (every dependency is pinned by it), and when (as the build says, or when this process started).
 */
export function buildFacts(build: { commit?: string; time?: string }) {
  let lockfile = 'unknown'
  try {
    lockfile = `sha256:${createHash('sha256')
      .update(readFileSync(new URL('package-lock.json', ROOT)))
      .digest('hex')}`
  } catch {
    // a deployment without the lockfile says so
  }
  return {
    commit: build.commit ?? checkoutCommit(),
    lockfile,
    built_at: build.time ?? STARTED_AT,
    built_at_source: build.time ? 'build' : 'process start',
    node: process.version,
  }
}
