import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { startOtlpReceiver, type OtlpReceiver } from '@svc/kit/testing/otlp-receiver'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { DEMO_EMAIL } from '../../../idp/src/areas/accounts/service.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()

describe('the task page’s timeline and its trace link, in Chromium', () => {
  let receiver: OtlpReceiver
  let stack: FullStack
  let browser: Browser | undefined
  let page: Page
  const errors: string[] = []

  before(async () => {
    receiver = await startOtlpReceiver()
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json'
    stack = await startFullStack({ RENTAL_TRACE_URL_TEMPLATE: 'http://localhost:16686/trace/{trace_id}' })
    if (!executable) return
    browser = await launchChromium(executable)
    page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage()
    page.setDefaultTimeout(10_000)
    page.on('pageerror', (e) => errors.push(e.message))
  })
  after(async () => {
    await browser?.close()
    await stack?.close()
    await receiver?.close()
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT
    delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL
  })

  it(
    'shows each hop with its duration and links the task’s trace, in English and Arabic',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const agentDid = await stack.agentOf('job_summary')
      await page.goto(`${stack.rental.url}/console`)
      await page.waitForURL(/\/ui\/login/)
      await page.fill('#email', DEMO_EMAIL)
      await page.fill('#password', stack.idp.ctx.config.demoPassword)
      await page.click('button[type=submit]')
      await page.getByTestId('person').waitFor()
      await page.goto(`${stack.rental.url}/console#/market`)
      await page
        .locator(`[data-job=job_summary] .agent[data-agent="${agentDid}"]`)
        .getByRole('button', { name: /^Hire / })
        .click()
      await page.waitForURL(/#\/engagements\/eng_/)
      await page.getByRole('button', { name: /Sign the agreement/ }).click()
      await page.getByTestId('engagement-state').filter({ hasText: 'active' }).waitFor()
      await page.fill('#task-text', 'A task whose timeline is shown on its page.')
      await page.getByRole('button', { name: 'Run the task' }).click()
      await page.waitForURL(/#\/tasks\/tsk_/)
      const taskId = page.url().split('/').pop()!
      await page.locator('[data-testid=task-state][data-state=completed]').waitFor()

      const task = (await (await page.request.get(`${stack.rental.url}/api/tasks/${taskId}`)).json()) as {
        trace_id: string
        trace_url: string
      }
      assert.match(task.trace_id, /^[0-9a-f]{32}$/)
      assert.equal(task.trace_url, `http://localhost:16686/trace/${task.trace_id}`)
      const link = page.getByTestId('trace-link')
      assert.equal(await link.getAttribute('href'), task.trace_url)
      assert.equal((await link.textContent())?.trim(), task.trace_id)
      const timeline = page.getByTestId('trace')
      await timeline.locator('tbody tr').nth(2).waitFor()
      const rows = await timeline.locator('tbody tr').allInnerTexts()
      assert.match(rows[0]!, /Accepted by the rental/)
      assert.ok(rows.some((r) => /The agent’s work/.test(r)))
      for (const r of rows) assert.match(r, /\d+(\.\d)? (ms|s)/, `a duration in "${r}"`)

      await page.selectOption('#lang', 'ar')
      await timeline.getByRole('heading', { name: 'الخط الزمني' }).waitFor()
      assert.deepEqual(errors, [])
    },
  )
})
