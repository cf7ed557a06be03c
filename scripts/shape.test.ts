import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, it } from 'node:test'
import { checkAll, checkService, valueImports } from './shape.ts'

/** A service `demo` made of the given files, in a folder of its own. */
function serviceOf(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'shape-'))
  for (const [path, text] of Object.entries(files)) {
    const file = join(root, 'services', 'demo', 'src', path)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
  return root
}

describe('the area rules (npm run shape)', () => {
  it('counts the imports that exist at run time, not the type-only ones', () => {
    const source = [
      "import type { A } from '../a/store.ts'",
      "import { type B, type C } from '../b/store.ts'",
      "import { type D, e } from '../d/store.ts'",
      "import f from '../f/index.ts'",
      "export { g } from '../g/store.ts'",
      "export type { H } from '../h/store.ts'",
      "import '../side/effect.ts'",
      "const later = await import('../late/store.ts')",
      "import { outside } from '@svc/kit'",
      "// import { commented } from '../commented/store.ts'",
    ].join('\n')
    assert.deepEqual(valueImports(source), [
      '../d/store.ts',
      '../f/index.ts',
      '../g/store.ts',
      '../side/effect.ts',
      '../late/store.ts',
    ])
  })

  it('refuses an import past another area’s index.ts, an upward import and a cycle', () => {
    const root = serviceOf({
      'areas/a/index.ts': "import { b } from '../b/index.ts'\nexport const a = 1",
      'areas/b/index.ts': "import { a } from '../a/service.ts'\nexport const b = 2",
      'areas/a/service.ts': 'export const a = 1',
      'helpers.ts': "import { a } from './areas/a/index.ts'",
      'app.ts': "import { a } from './areas/a/index.ts'\nimport { b } from './areas/b/index.ts'",
    })
    const findings = checkService('demo', root)
    assert.deepEqual(findings.map((f) => f.kind).sort(), ['cycle', 'past-index', 'upward'])
    assert.match(
      findings.find((f) => f.kind === 'past-index')!.message,
      /areas\/b\/index\.ts imports areas\/a\/service\.ts/,
    )
    assert.match(
      findings.find((f) => f.kind === 'upward')!.message,
      /src\/helpers\.ts imports areas\/a\/index\.ts/,
    )
    assert.match(findings.find((f) => f.kind === 'cycle')!.message, /areas\/a, areas\/b/)
  })

  it('accepts areas seen through their index.ts, type imports past it, and app.ts mounting them', () => {
    const root = serviceOf({
      'areas/a/index.ts':
        "import type { B } from '../b/store.ts'\nimport { db } from '../../db.ts'\nexport type A = B",
      'areas/b/index.ts': "import { a } from '../a/index.ts'\nexport const b = a",
      'areas/b/store.ts': 'export type B = number',
      'db.ts': 'export const db = 1',
      'app.ts': "import { a } from './areas/a/index.ts'",
    })
    assert.deepEqual(checkService('demo', root), [])
  })

  it('finds nothing in this repository', () => {
    assert.deepEqual(
      checkAll().map((f) => `${f.service} ${f.kind}: ${f.message}`),
      [],
    )
  })
})
