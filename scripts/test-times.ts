/**
 * A test reporter beside `spec`: adds up each file's top-level tests and, when the run ends,
 * prints the slowest files, so that the CI's time can be read file by file (docs/performance.md, CI under 15 minutes).
 */
import { relative } from 'node:path'

interface TestEvent {
  type: string
  data: { nesting?: number; file?: string; details?: { duration_ms?: number } }
}

const SHOWN = 40

export default async function* testTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const seconds = new Map<string, number>()
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue
    const { nesting, file, details } = event.data
    if (nesting !== 0 || !file) continue
    // the bundled file's name back to its source's
    const name = relative(process.cwd(), file)
      .replace(/^\.build\/test\/\d+\//, '')
      .replace(/\.mjs$/, '.ts')
    seconds.set(name, (seconds.get(name) ?? 0) + (details?.duration_ms ?? 0) / 1000)
  }
  if (seconds.size === 0) return
  const all = [...seconds].sort((a, b) => b[1] - a[1])
  const total = all.reduce((sum, [, s]) => sum + s, 0)
  yield `\nthe slowest of ${all.length} files (their tests' time; ${total.toFixed(0)} s in all):\n`
  for (const [file, s] of all.slice(0, SHOWN)) yield `${s.toFixed(1).padStart(7)} s  ${file}\n`
}
