import { DEMO_EMAIL } from '../../../services/idp/src/areas/accounts/index.ts'
import type { Browser } from 'playwright-core'
import type { FullStack } from '../../../services/rental/test/support/full-stack.ts'

/**
 * The person allows a device code in Chromium, as they would: the idp's page (signing in first
 * with the demo account), then Allow (or Deny). Answers the page's last words.
 */
export async function answerOnPage(
  browser: Browser,
  stack: FullStack,
  url: string,
  decision: 'Allow' | 'Deny' = 'Allow',
) {
  const context = await browser.newContext()
  try {
    const page = await context.newPage()
    page.setDefaultTimeout(10_000)
    await page.goto(url)
    if (new URL(page.url()).pathname === '/ui/login') {
      await page.fill('#email', DEMO_EMAIL)
      await page.fill('#password', stack.idp.ctx.config.demoPassword)
      await page.click('button[type=submit]')
      await page.waitForURL(/\/device/)
    }
    await page.getByRole('button', { name: decision }).click()
    await page.waitForLoadState()
    return (await page.textContent('main')) ?? (await page.textContent('body')) ?? ''
  } finally {
    await context.close()
  }
}
