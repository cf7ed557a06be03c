/**
 * The documentation stays readable and self-contained: README.md at most 200 lines,
 * docs/architecture.md at most 400; no paragraph over 200 words in README.md or docs/**\/*.md
 * (docs/openapi aside); nothing points into ../shared (a clone does not have it); every relative
 * link names a file of the repository, and its #anchor a heading of that file; each service's
 * document lists every area its app.ts mounts, and no area it does not have.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { repoRoot } from '../packages/kit/src/paths.ts'

const root = repoRoot()
const MAX_WORDS = 200

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return path === join(root, 'docs', 'openapi') ? [] : markdownUnder(path)
    return name.endsWith('.md') ? [path] : []
  })
}

const files = [join(root, 'README.md'), ...markdownUnder(join(root, 'docs'))].map((f) => relative(root, f))
const text = new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]))
const lines = (file: string) => text.get(file)!.replace(/\n$/, '').split('\n')

/** A line's kind: what starts a block other than a paragraph. */
const isHeading = (line: string) => /^#{1,6}\s/.test(line)
const isTable = (line: string) => /^\s*\|/.test(line)
const isListItem = (line: string) => /^\s*([-*+]|\d+[.)])\s/.test(line)
const isFence = (line: string) => /^\s*(```|~~~)/.test(line)
const words = (s: string) => s.split(/\s+/).filter(Boolean).length

type Block = { line: number; words: number; kind: 'paragraph' | 'tight list' }

/**
 * The prose blocks of a file: paragraphs (runs of non-blank lines outside code blocks that are not
 * a heading, a table or a list) and list items (an item with its continuation lines).
 */
function blocks(file: string): Block[] {
  const found: Block[] = []
  let fenced = false
  let current: Block | undefined
  const end = () => {
    if (current) found.push(current)
    current = undefined
  }
  lines(file).forEach((line, i) => {
    if (isFence(line)) {
      end()
      fenced = !fenced
      return
    }
    if (fenced || line.trim() === '' || isHeading(line) || isTable(line)) return end()
    // a tight list (items with no blank line between them) reads as one block
    if (isListItem(line) && current?.kind !== 'tight list') {
      end()
      current = { line: i + 1, words: words(line), kind: 'tight list' }
      return
    }
    if (current) current.words += words(line)
    else current = { line: i + 1, words: words(line), kind: 'paragraph' }
  })
  end()
  return found
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  let fenced = false
  for (const line of lines(file)) {
    if (isFence(line)) fenced = !fenced
    if (fenced || !isHeading(line)) continue
    const slug = line
      .replace(/^#+\s+/, '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n ? `${slug}-${n}` : slug)
  }
  return out
}

/** Every markdown link and image target outside code, with its line. */
function links(file: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = []
  let fenced = false
  lines(file).forEach((line, i) => {
    if (isFence(line)) fenced = !fenced
    if (fenced) return
    const prose = line.replace(/`[^`]*`/g, '')
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      found.push({ line: i + 1, target: m[1]! })
  })
  return found
}

/** The area folders a service's app.ts imports an area from (`import { xArea } from './areas/x/index.ts'`). */
function mountedAreas(service: string): string[] {
  const app = readFileSync(join(root, 'services', service, 'src', 'app.ts'), 'utf8')
  return [...app.matchAll(/import \{ \w+Area \} from '\.\/areas\/([\w-]+)\/index\.ts'/g)].map((m) => m[1]!)
}

/** The first column of the tables under a heading "Areas" or "The areas", when it is one `code` span. */
function tabledNames(file: string): Set<string> {
  const names = new Set<string>()
  let underAreas = false
  for (const line of lines(file)) {
    if (isHeading(line)) underAreas = /^#+\s+(the )?areas$/i.test(line.trim())
    const m = /^\|\s*`([\w-]+)`\s*\|/.exec(line)
    if (underAreas && m) names.add(m[1]!)
  }
  return names
}

const SERVICE_DOCS = {
  idp: 'docs/idp.md',
  rental: 'docs/rental.md',
  ledger: 'docs/ledger.md',
  agents: 'docs/agents.md',
}

describe('the documentation', () => {
  it('README.md has at most 200 lines', () => {
    const n = lines('README.md').length
    assert.ok(n <= 200, `README.md has ${n} lines`)
  })

  it('docs/architecture.md has at most 400 lines', () => {
    const n = lines('docs/architecture.md').length
    assert.ok(n <= 400, `docs/architecture.md has ${n} lines`)
  })

  it(`has no paragraph or list item over ${MAX_WORDS} words`, () => {
    const long = files.flatMap((file) =>
      blocks(file)
        .filter((b) => b.words > MAX_WORDS)
        .map((b) => `${file}:${b.line}: a ${b.kind} of ${b.words} words`),
    )
    assert.deepEqual(long, [], `split these, or make them lists or tables:\n${long.join('\n')}`)
  })

  it('points nowhere into ../shared, which a clone does not have', () => {
    const found = files.flatMap((file) =>
      lines(file).flatMap((line, i) => (line.includes('../shared') ? [`${file}:${i + 1}`] : [])),
    )
    assert.deepEqual(found, [], 'name the document instead (for example "the rental service specification")')
  })

  it('carries no merge conflict markers', () => {
    const found = files.flatMap((file) =>
      lines(file).flatMap((line, i) => (/^(<{7}|={7}$|>{7}|(> ){7})/.test(line) ? [`${file}:${i + 1}`] : [])),
    )
    assert.deepEqual(found, [], 'a merge left these lines')
  })

  it('links only to files of the repository, and to headings they have', () => {
    const broken: string[] = []
    for (const file of files)
      for (const { line, target } of links(file)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // https:, mailto:, …
        const [path, anchor] = target.split('#') as [string, string | undefined]
        const to = path ? relative(root, resolve(dirname(join(root, file)), decodeURI(path))) : file
        if (to.startsWith('..') || !existsSync(join(root, to))) {
          broken.push(`${file}:${line}: ${target} (no such file)`)
          continue
        }
        if (anchor && to.endsWith('.md') && !anchors(to).has(decodeURIComponent(anchor).toLowerCase()))
          broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${to})`)
      }
    assert.deepEqual(broken, [])
  })

  for (const [service, doc] of Object.entries(SERVICE_DOCS))
    it(`${doc} lists every area services/${service}/src/app.ts mounts`, () => {
      const mounted = mountedAreas(service)
      assert.ok(mounted.length > 0, `no areas found in services/${service}/src/app.ts`)
      const listed = tabledNames(doc)
      const missing = mounted.filter((a) => !listed.has(a))
      assert.deepEqual(missing, [], `add a row for each to the areas table of ${doc}`)
      const folders = new Set(readdirSync(join(root, 'services', service, 'src', 'areas')))
      const gone = [...listed].filter(
        (a) => !folders.has(a) && /^[a-z0-9-]+$/.test(a) && !mounted.includes(a),
      )
      assert.deepEqual(gone, [], `${doc} lists areas services/${service}/src/areas/ does not have`)
    })
})
