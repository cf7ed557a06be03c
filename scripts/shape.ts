/**
 * `npm run shape` (and part of `npm run lint`): the area rules of every service, checked on the
 * import graph of its `src/`.
 *
 * - An area (`src/areas/<name>/`) is seen by the rest of its service only through its `index.ts`;
 *   a type-only import may reach further (it leaves no edge at run time).
 * - Service-level modules (`src/*.ts`, `src/<folder>/` outside `areas/`) sit below the areas:
 *   they never import an area, except `app.ts` and `main.ts`, which mount them.
 * - No cycles between areas or service-level modules (value imports).
 *
 * Test files are not checked. `--report` prints the findings without failing.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { repoRoot } from '../packages/kit/src/paths.ts'

export interface Finding {
  service: string
  kind: 'past-index' | 'upward' | 'cycle'
  message: string
}

interface Edge {
  from: string
  to: string
  file: string
  target: string
}

const IMPORT =
  /(?:^|[;\n])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]|(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

/** The relative imports of a file that exist at run time (type-only ones left out). */
export function valueImports(source: string): string[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
  const found: string[] = []
  for (const m of text.matchAll(IMPORT)) {
    const [, , typeKeyword, clause = '', from, bare, dynamic] = m
    const specifier = from ?? bare ?? dynamic
    if (!specifier?.startsWith('.')) continue
    if (typeKeyword) continue
    const braces = clause.match(/^\{([\s\S]*)\}$/)
    if (braces) {
      const names = braces[1]!
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)
      if (names.length > 0 && names.every((n) => n.startsWith('type '))) continue
    }
    found.push(specifier)
  }
  return found
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** `areas/<name>` for a file in an area, `<module>` for a service-level file or folder. */
function nodeOf(src: string, file: string): string {
  const parts = relative(src, file).split('/')
  if (parts[0] === 'areas' && parts.length > 2) return `areas/${parts[1]}`
  return parts[0]!.replace(/\.ts$/, '')
}

const MOUNTERS = new Set(['app', 'main'])

export function checkService(service: string, root = repoRoot()): Finding[] {
  const src = join(root, 'services', service, 'src')
  const findings: Finding[] = []
  const edges: Edge[] = []
  for (const file of sourceFiles(src)) {
    const from = nodeOf(src, file)
    for (const specifier of valueImports(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), specifier)
      if (!target.startsWith(src + '/')) continue
      const to = nodeOf(src, target)
      if (to === from) continue
      const where = relative(root, file)
      const what = relative(src, target)
      edges.push({ from, to, file: where, target: what })
      if (to.startsWith('areas/') && !what.endsWith(`${to}/index.ts`))
        findings.push({
          service,
          kind: 'past-index',
          message: `${where} imports ${what}: another area is seen only through ${to}/index.ts`,
        })
      else if (to.startsWith('areas/') && !from.startsWith('areas/') && !MOUNTERS.has(from))
        findings.push({
          service,
          kind: 'upward',
          message: `${where} imports ${what}: service-level modules sit below the areas and never import one`,
        })
    }
  }
  for (const cycle of cyclesOf(edges))
    findings.push({
      service,
      kind: 'cycle',
      message: `a cycle between ${cycle.nodes.join(', ')}: ${cycle.example}`,
    })
  return findings
}

/** Strongly connected components of more than one node (Tarjan), each with the edges that close it. */
function cyclesOf(edges: Edge[]): Array<{ nodes: string[]; example: string }> {
  const next = new Map<string, Edge[]>()
  for (const edge of edges) next.set(edge.from, [...(next.get(edge.from) ?? []), edge])
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  let counter = 0
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter++)
    stack.push(node)
    onStack.add(node)
    for (const { to } of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!))
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) components.push(component.sort())
    }
  }
  for (const node of new Set(edges.map((e) => e.from))) if (!index.has(node)) visit(node)
  return components.map((nodes) => {
    const inside = new Set(nodes)
    const closing = edges.filter((e) => inside.has(e.from) && inside.has(e.to))
    const seen = new Set<string>()
    const example = closing
      .filter((e) => !seen.has(`${e.from}>${e.to}`) && seen.add(`${e.from}>${e.to}`))
      .map((e) => `${e.file} → ${e.target}`)
      .join('; ')
    return { nodes, example }
  })
}

export function checkAll(root = repoRoot()): Finding[] {
  const services = readdirSync(join(root, 'services')).filter((s) => {
    try {
      return statSync(join(root, 'services', s, 'src')).isDirectory()
    } catch {
      return false
    }
  })
  return services.flatMap((s) => checkService(s, root))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const findings = checkAll()
  for (const f of findings) console.log(`${f.service} ${f.kind}: ${f.message}`)
  const count = (service: string, kind: Finding['kind']) =>
    findings.filter((f) => f.service === service && f.kind === kind).length
  for (const service of [...new Set(findings.map((f) => f.service))])
    console.log(
      `${service}: ${count(service, 'past-index')} imports past an index.ts, ${count(service, 'upward')} upward, ${count(service, 'cycle')} cycles`,
    )
  if (findings.length === 0) console.log('every area is seen through its index.ts; no cycles')
  else if (!process.argv.includes('--report')) process.exit(1)
}
