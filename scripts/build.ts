/**
 * Bundles a service's TypeScript (and the workspace packages it uses) into one ES module, so it
 * runs on plain Node: no TypeScript loader in the running process (about 70 MB less per service).
 * Packages from node_modules stay external and load as installed.
 */
import { join } from 'node:path'
import { build, type Plugin } from 'esbuild'
import { repoRoot } from '../packages/kit/src/paths.ts'
import type { ServiceName } from '../packages/kit/src/topology.ts'

const externalPackages: Plugin = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@svc/') || args.path.startsWith('node:')) return undefined
      return { path: args.path, external: true }
    })
  },
}

/** Writes services/<name>/.build/main.mjs; beside src/, so paths relative to the module resolve the same. */
export async function bundleService(name: ServiceName): Promise<string> {
  const dir = join(repoRoot(), 'services', name)
  const outfile = join(dir, '.build', 'main.mjs')
  await build({
    entryPoints: [join(dir, 'src', 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'warning',
    plugins: [externalPackages],
  })
  return outfile
}
