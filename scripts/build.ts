/**
 * Bundles a service's TypeScript (and the workspace packages it uses) into one ES module, so it
 * runs on plain Node: no TypeScript loader in the running process (about 70 MB less per service).
 * Packages from node_modules stay external and load as installed.
 */
import { rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build, type BuildOptions, type Plugin } from 'esbuild'
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
  await build(bundleOptions('service', { entryPoints: [join(dir, 'src', 'main.ts')], outfile }))
  return outfile
}

// spelt out of parts: this file is itself bundled with this plugin into a test that calls bundleEntry
const META_URL = ['import', 'meta', 'url'].join('.')
/**
 * Each bundled module keeps its own `import.meta.url` (the .ts file it came from), so paths made
 * relative to a module (migrations, pages, fixtures) resolve as they do under tsx.
 */
const ownModuleUrl: Plugin = {
  name: 'own-module-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined
      const text = await readFile(args.path, 'utf8')
      const url = JSON.stringify(pathToFileURL(args.path).href)
      return { contents: text.replaceAll(META_URL, url), loader: 'ts' }
    })
  },
}

/**
 * What every bundle here shares: ES modules for Node 20, with node_modules left external. A
 * service's own bundle carries its source map inline; bundled `as-tests`, each module keeps its own
 * `import.meta.url`, with a linked source map that leaves the sources out.
 */
function bundleOptions(kind: 'service' | 'as-tests', options: BuildOptions): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    ...(kind === 'service'
      ? { sourcemap: 'inline', plugins: [externalPackages] }
      : { sourcemap: 'linked', sourcesContent: false, plugins: [externalPackages, ownModuleUrl] }),
    ...options,
  }
}

/**
 * One entry point (a service's main.ts) bundled as the tests are (each module keeps its own
 * `import.meta.url`) to `outfile`, for a test that starts the service in a process of its own: that
 * process then loads plain JavaScript rather than compiling the service's TypeScript through tsx.
 * Answers `outfile`, which should lie within the repository (its packages load from node_modules).
 */
export async function bundleEntry(entry: string, outfile: string): Promise<string> {
  await build(bundleOptions('as-tests', { entryPoints: [entry], outfile }))
  return outfile
}

/**
 * The test files (and the preload) bundled once into `.build/test/`, in the same folders, with
 * the code they share split into common chunks: a test process then loads plain JavaScript
 * rather than compiling TypeScript through a loader thread, module by module (docs/performance.md,
 * CI under 15 minutes). Answers each bundled file, by the repository path of its source.
 */
export async function bundleTests(files: string[], outdir: string): Promise<Map<string, string>> {
  const root = repoRoot()
  rmSync(outdir, { recursive: true, force: true })
  await build(
    bundleOptions('as-tests', {
      entryPoints: files.map((f) => join(root, f)),
      outdir,
      outbase: root,
      outExtension: { '.js': '.mjs' },
      splitting: true,
      // a chunk's name is its content hash: a chunk that did not change keeps its file
      chunkNames: 'chunks/[name]-[hash]',
    }),
  )
  return new Map(files.map((f) => [f, relative(root, join(outdir, f.replace(/\.ts$/, '.mjs')))]))
}
