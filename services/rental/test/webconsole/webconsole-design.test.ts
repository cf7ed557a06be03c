import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser } from 'playwright-core'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()

describe('the console and the idp’s pages share one style sheet and one favicon (packages/kit design)', () => {
  let stack: FullStack
  let browser: Browser | undefined

  before(async () => {
    stack = await startFullStack()
    if (executable) browser = await launchChromium(executable)
  })
  after(async () => {
    await browser?.close()
    await stack.close()
  })

  it('serves the same style sheet as the idp, versioned and cached, and a favicon at /favicon.ico', async () => {
    const page = await (await stack.alice.jar.fetch(`${stack.rental.url}/console`)).text()
    const href = /<link rel="stylesheet" href="(\/console\/design\.css\?v=[^"]+)">/.exec(page)?.[1]
    assert.ok(href, 'the console links the shared sheet')
    assert.ok(page.indexOf(href) < page.indexOf('/console/assets/console.css'), 'before its own sheets')
    assert.match(page, /<link rel="icon" type="image\/svg\+xml" href="\/favicon\.svg\?v=/)
    const sheet = await fetch(`${stack.rental.url}${href}`)
    assert.equal(sheet.status, 200)
    assert.equal(sheet.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    const idpSheet = await fetch(`${stack.idp.url}/ui/design.css`)
    assert.equal(await sheet.text(), await idpSheet.text(), 'one sheet for both services')
    const again = await fetch(`${stack.rental.url}/console/design.css`, {
      headers: { 'if-none-match': sheet.headers.get('etag')! },
    })
    assert.equal(again.status, 304)
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      const icon = await fetch(`${stack.rental.url}${path}`)
      assert.equal(icon.status, 200, path)
      assert.equal(icon.headers.get('content-type'), 'image/svg+xml')
    }
  })

  it(
    'the console takes its colours from the shared tokens, and keeps its look',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } })
      await context.addCookies([
        { name: 'rental_session', value: stack.alice.jar.get('rental_session')!, url: stack.rental.url },
      ])
      const page = await context.newPage()
      const failed: string[] = []
      page.on('response', (r) => {
        if (r.status() >= 400 && !r.url().endsWith('/api/me')) failed.push(`${r.status()} ${r.url()}`)
      })
      await page.goto(`${stack.rental.url}/console#/market`)
      await page.waitForLoadState('networkidle')
      // run in the page (the tests have no DOM types)
      const look = (await page.evaluate(`(() => {
        const root = getComputedStyle(document.documentElement)
        return {
          shared: root.getPropertyValue('--svc-accent').trim(),
          accent: root.getPropertyValue('--accent').trim(),
          focus: root.getPropertyValue('--focus').trim(),
          background: getComputedStyle(document.body).backgroundColor,
        }
      })()`)) as Record<string, string>
      assert.deepEqual(look, {
        shared: '#0b57d0',
        accent: '#0b57d0',
        focus: '#0b57d0',
        background: 'rgb(250, 250, 250)',
      })
      const shots = mkdtempSync(join(tmpdir(), 'console-design-'))
      await page.screenshot({ path: join(shots, 'market.png') })
      process.stdout.write(`# the console with the shared sheet: ${shots}/market.png\n`)
      assert.deepEqual(failed, [])
      await context.close()
    },
  )
})
