import { DEMO_EMAIL } from '../../../services/idp/src/areas/accounts/index.ts'
import type { Browser } from 'playwright-core'
import { ADMIN } from '../../../services/rental/test/support/stack.ts'
import type { Client, FullStack } from '../../../services/rental/test/support/full-stack.ts'
import type { Send } from '../src/index.ts'

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

/** A public first-party client for the device grant, registered as an admin would (when svc-cli is not). */
export async function registerDeviceClient(stack: FullStack): Promise<string> {
  const res = await fetch(`${stack.idp.url}/manage/v1/clients`, {
    method: 'POST',
    headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'svc command line (test)',
      client_type: 'public',
      first_party: true,
      redirect_uris: ['http://127.0.0.1/callback'],
    }),
  })
  const body = (await res.json()) as { client_id: string }
  if (!res.ok) throw new Error(`registering the device client: ${res.status} ${JSON.stringify(body)}`)
  return body.client_id
}

/** Requests through a console session (its cookie and CSRF header): the SDK without a token. */
export const consoleSend =
  (who: Client): Send =>
  async (request) =>
    who.jar.fetch(request.url, {
      method: request.method,
      headers: { ...Object.fromEntries(request.headers), 'x-csrf-token': who.csrf },
      ...(request.body ? { body: await request.arrayBuffer() } : {}),
      signal: request.signal,
    })
