import { rmSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { repoRoot } from '@svc/kit'
import { bundleEntry } from '../../../scripts/build.ts'

// bundled once per test process and entry, into a folder of its own removed when the process exits
const folder = join(repoRoot(), '.build', 'service-process', String(process.pid))
const bundles = new Map<string, Promise<string>>()

/**
 * A service's `src/main.ts` bundled into plain JavaScript, for a test that starts the service in a
 * process of its own (to kill it): `node --enable-source-maps <the answer>` runs it as `npm start`
 * does, without compiling its TypeScript through tsx at every launch.
 */
export function bundledMain(main: string): Promise<string> {
  let bundle = bundles.get(main)
  if (!bundle) {
    if (bundles.size === 0) process.once('exit', () => rmSync(folder, { recursive: true, force: true }))
    bundle = bundleEntry(main, join(folder, `${basename(dirname(dirname(main)))}.mjs`))
    bundles.set(main, bundle)
  }
  return bundle
}
