import type { Browser, BrowserContext, Page } from 'playwright-core'
import { seriousAxeViolations } from '@svc/testing/axe'
import { chromiumPath, launchChromium } from '@svc/testing/chromium'
import { DEMO_EMAIL } from '../../../idp/src/areas/accounts/service.ts'
import type { Client, FullStack } from './full-stack.ts'

/** The web console's browser tests' shared setup: Chromium, a signed-in page, the catalogue's words. */

export const WIDE = { width: 1280, height: 900 }
export const PHONE = { width: 390, height: 844 }
export const ARABIC = /[\u0600-\u06FF]/

export type Lang = 'en' | 'ar'
type Words = Record<string, string>
const { CATALOGUES } = (await import(new URL('../../console/i18n.js', import.meta.url).href)) as {
  CATALOGUES: Record<Lang, Words>
}

/** The console's own words for `key`, its `{placeholders}` filled from `values`. */
export const say = (lang: Lang, key: string, values: Record<string, string> = {}) =>
  CATALOGUES[lang][key]!.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? '')

/** Records every verdict a receipt shows, in order, in `window.__verdicts` (a red one even for a moment). */
const RECORD_VERDICTS = `
  window.__verdicts = []
  new MutationObserver(() => {
    for (const el of document.querySelectorAll('[data-verdict]')) {
      const v = el.getAttribute('data-verdict')
      if (window.__verdicts[window.__verdicts.length - 1] !== v) window.__verdicts.push(v)
    }
  }).observe(document, { subtree: true, childList: true, attributes: true })`

/** The console's session cookie of `client` (alice by default), for a browser context to start signed in. */
export const sessionCookie = (stack: FullStack, client: Client = stack.alice) => ({
  name: 'rental_session',
  value: client.jar.get('rental_session')!,
  url: stack.rental.url,
})

export interface ConsoleBrowser {
  browser: Browser
  context: BrowserContext
  page: Page
  /** Uncaught errors of the page's scripts: a test ends with none. */
  errors: string[]
}

export interface ConsoleBrowserOptions {
  viewport?: { width: number; height: number }
  /** Starts with alice's console session (the default); false: signed out, to sign in at the idp. */
  signedIn?: boolean
  /** Keeps `window.__verdicts` (see RECORD_VERDICTS). */
  recordVerdicts?: boolean
  acceptDownloads?: boolean
  timeoutMs?: number
}

/** Debian's Chromium with one page on the stack's console; axe-core needs the CSP bypassed (an inline script). */
export async function startConsoleBrowser(
  stack: FullStack,
  options: ConsoleBrowserOptions = {},
): Promise<ConsoleBrowser> {
  const executable = chromiumPath()
  if (!executable) throw new Error('no Chromium: guard the browser setup with chromiumPath()')
  const browser = await launchChromium(executable)
  const context = await browser.newContext({
    viewport: options.viewport ?? WIDE,
    bypassCSP: true,
    acceptDownloads: options.acceptDownloads ?? false,
  })
  if (options.signedIn ?? true) await context.addCookies([sessionCookie(stack)])
  if (options.recordVerdicts) await context.addInitScript(RECORD_VERDICTS)
  const page = await context.newPage()
  page.setDefaultTimeout(options.timeoutMs ?? 15_000)
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  return { browser, context, page, errors }
}

/** Opens the console's `route` (a hash route) in `lang` and waits for its heading. */
export async function openScreen(page: Page, stack: FullStack, route: string, lang: Lang = 'en') {
  await page.goto(`${stack.rental.url}/console?lang=${lang}#/${route}`)
  await page.locator('main h1').first().waitFor()
}

/**
 * Signs in as a person does: the console at `route` sends a signed-out browser to the idp's form,
 * which takes the demo account's email and password and sends the person back.
 */
export async function signInToConsole(page: Page, stack: FullStack, route = '', lang: Lang = 'en') {
  await page.goto(`${stack.rental.url}/console?lang=${lang}${route ? `#/${route}` : ''}`)
  await page.waitForURL(/\/ui\/login/)
  await page.fill('#email', DEMO_EMAIL)
  await page.fill('#password', stack.idp.ctx.config.demoPassword)
  await page.click('button[type=submit]')
}

/** axe-core's serious and critical findings once the screen has stopped loading. */
export async function axeFindings(page: Page): Promise<string[]> {
  await page.waitForLoadState('networkidle')
  return await seriousAxeViolations(page)
}
