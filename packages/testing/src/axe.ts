import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js')

/**
 * axe-core's serious and critical violations on the page as it is, each with up to three of its
 * elements; "axe-core checked nothing" when no rule passed (a blank page is no success).
 */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  // once per document: a route change within the single-page console keeps it
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.addScriptTag({ path: AXE })
  return (await page.evaluate(`axe.run(document).then((results) =>
    results.passes.length === 0
      ? ['axe-core checked nothing']
      : results.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => v.id + ' (' + v.impact + '): ' +
            v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')))`)) as string[]
}
