import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A file the console serves: its bytes, type and a strong ETag, read once at start. */
export interface Served {
  body: Buffer
  type: string
  etag: string
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}

const served = (path: string): Served => {
  const body = readFileSync(path)
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`
  return { body, type: TYPES[extname(path)] ?? 'application/octet-stream', etag }
}

/**
 * The rental package's folder: the nearest above this module holding a package.json (from the
 * sources, `src/areas/webconsole/`; from `npm start`'s bundle, `.build/`).
 */
function packageFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
}

/** The browser code written for the console (`services/rental/console/`), by file name. */
export function consoleAssets(): Map<string, Served> {
  const folder = join(packageFolder(), 'console')
  const files = new Map<string, Served>()
  for (const name of readdirSync(folder))
    if (TYPES[extname(name)] && /^[a-z0-9-]+\.[a-z]+$/.test(name)) files.set(name, served(join(folder, name)))
  return files
}

/** A package's ES module entry (its `module` or `main`), found as Node finds the package from `from`. */
function moduleOf(from: NodeJS.Require, name: string): string {
  for (const dir of from.resolve.paths(name) ?? []) {
    const manifest = join(dir, name, 'package.json')
    if (!existsSync(manifest)) continue
    const { module, main } = JSON.parse(readFileSync(manifest, 'utf8')) as { module?: string; main?: string }
    return join(dir, name, module ?? main ?? 'index.js')
  }
  throw new Error(`${name} is not installed`)
}

/**
 * The libraries the browser imports, as ES modules straight from node_modules (no build step,
 * nothing from a CDN): Preact and its hooks, htm, and the two the repo's own signing code uses
 * (`canonicalize` for JCS and `@scure/base` for base58btc), resolved from `@svc/trust` so the
 * browser runs the very versions the server verifies with.
 */
export function vendorModules(): Map<string, Served> {
  const require = createRequire(import.meta.url)
  const fromTrust = createRequire(require.resolve('@svc/trust/jcs'))
  return new Map([
    ['preact.mjs', served(require.resolve('preact'))],
    ['hooks.mjs', served(require.resolve('preact/hooks'))],
    ['htm.mjs', served(join(dirname(require.resolve('htm')), 'htm.module.js'))],
    ['canonicalize.mjs', served(moduleOf(fromTrust, 'canonicalize'))],
    ['base.mjs', served(moduleOf(fromTrust, '@scure/base'))],
  ])
}

/** The import map of the console page: bare names to the vendor paths. */
export const IMPORT_MAP = JSON.stringify({
  imports: {
    preact: '/console/vendor/preact.mjs',
    'preact/hooks': '/console/vendor/hooks.mjs',
    htm: '/console/vendor/htm.mjs',
    canonicalize: '/console/vendor/canonicalize.mjs',
    '@scure/base': '/console/vendor/base.mjs',
  },
})
