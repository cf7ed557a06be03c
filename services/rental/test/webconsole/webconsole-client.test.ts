import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { DEMO_EMAIL } from '../../../idp/src/areas/accounts/service.ts'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

const executable = chromiumPath()
const ARABIC_DIGIT = /[٠-٩]/

type Receipts = {
  receipts: Array<{ task_id: string | null; escrow_id: string | null; ledger_index: number | null }>
}

describe('the web console’s client screens in Chromium: receipts verified in the browser, a release, a dispute, an invoice, Arabic', () => {
  let stack: FullStack
  let browser: Browser | undefined
  let page: Page
  let shots = ''
  const errors: string[] = []

  before(async () => {
    // bob (the demo user as another client) is an operator: he releases versions of the platform's agents
    stack = await startFullStack({ RENTAL_OPERATORS: 'another-client' })
    if (!executable) return
    shots = mkdtempSync(join(tmpdir(), 'console-client-screens-'))
    console.log(`screenshots of the client screens: ${shots}`)
    browser = await launchChromium(executable)
    page = await (
      await browser.newContext({ viewport: { width: 1200, height: 900 }, acceptDownloads: true })
    ).newPage()
    page.setDefaultTimeout(10_000)
    page.on('pageerror', (e) => errors.push(e.message))
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico') && !r.url().endsWith('/api/me'))
        errors.push(`${r.status()} ${r.url()}`)
    })
  })
  after(async () => {
    await browser?.close()
    await stack.close()
  })

  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })
  const go = (hash: string) => page.goto(`${stack.rental.url}/console#/${hash}`)
  /** Waits until the ledger holds the receipts `which` picks (the outbox delivers them in the background). */
  const onLedger = (did: string, which: (r: Receipts['receipts'][number]) => boolean) =>
    eventually('the receipt is on the ledger', async () => {
      const answer = await stack.call(stack.alice, 'GET', `/api/agents/${encodeURIComponent(did)}/receipts`)
      const found = (answer.body as Receipts).receipts.filter(which)
      return found.length > 0 && found.every((r) => r.ledger_index !== null)
    })

  it(
    'a person sees a task’s receipt verified (and a tampered proof refused), releases, opens and withdraws a dispute, asks a refund, downloads an invoice, reads it in Arabic',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const agentDid = await stack.agentOf('job_summary')
      await page.goto(`${stack.rental.url}/console`)
      await page.waitForURL(/\/ui\/login/)
      await page.fill('#email', DEMO_EMAIL)
      await page.fill('#password', stack.idp.ctx.config.demoPassword)
      await page.click('button[type=submit]')
      await page.getByTestId('person').waitFor()

      // hire and sign in the browser, then run a task (as the console's first test does)
      await go('market')
      await page
        .locator(`[data-job=job_summary] .agent[data-agent="${agentDid}"]`)
        .getByRole('button', { name: /^Hire / })
        .click()
      await page.waitForURL(/#\/engagements\/eng_/)
      const engagementId = page.url().split('/').pop()!
      await page.getByRole('button', { name: /Sign the agreement/ }).click()
      await page.getByTestId('engagement-state').filter({ hasText: 'active' }).waitFor()
      await page.fill('#task-text', 'A receipt for this task is checked in the browser. Then it is paid.')
      await page.getByRole('button', { name: 'Run the task' }).click()
      await page.waitForURL(/#\/tasks\/tsk_/)
      const taskId = page.url().split('/').pop()!
      await page.locator('[data-testid=task-state][data-state=completed]').waitFor()

      // the task's receipt, verified by the browser once the ledger has it
      await onLedger(agentDid, (r) => r.task_id === taskId && r.escrow_id === null)
      await page.getByRole('button', { name: 'Check again' }).click()
      const receipt = page.locator('[data-testid=receipts] .receipt[data-type="task.completed"]')
      await receipt.locator('[data-verdict=verified]').waitFor()
      assert.equal(await receipt.locator('.checks li.ok').count(), 6, 'every check passed')
      await shot('1-task-receipt-verified')

      // the same answer altered: one hash of the audit path, then the log key (another than the one
      // this browser kept when it first checked): not verified, and why
      type Answer = {
        receipts: Array<{ proof: { hashes: string[] } | null }>
        log_key: { verifier_key: string }
      }
      const tamper = (change: (body: Answer) => void) =>
        page.route('**/api/agents/*/receipts?*', async (route) => {
          const answer = await route.fetch()
          const body = (await answer.json()) as Answer
          change(body)
          await route.fulfill({ response: answer, json: body })
        })
      const refused = async (why: string) => {
        await page.getByRole('button', { name: 'Check again' }).click()
        await receipt.locator('[data-verdict=not-verified]', { hasText: why }).waitFor()
        await page.unroute('**/api/agents/*/receipts?*')
      }
      await tamper((body) => {
        for (const r of body.receipts) if (r.proof) r.proof.hashes[0] = Buffer.alloc(32, 1).toString('base64')
      })
      await refused('inclusion proof')
      await tamper((body) => {
        body.log_key.verifier_key = body.log_key.verifier_key.replace(/^[^+]+/, 'another-log')
      })
      await refused('log key')

      // the release: the instruction signed in this browser, the escrow paid out, its receipt verified
      await go(`engagements/${engagementId}`)
      await page.getByTestId('releases').locator('.signable').waitFor()
      await page.getByRole('button', { name: 'Sign and release the payment' }).click()
      await page.getByTestId('releases').locator('.empty').waitFor()
      const detail = (await stack.call(stack.alice, 'GET', `/api/engagements/${engagementId}`)).body as {
        engagement: { escrows: Array<{ id: string; state: string; task_id: string | null }> }
      }
      const escrow = detail.engagement.escrows.find((e) => e.task_id === taskId)!
      assert.equal(escrow.state, 'released')
      await onLedger(agentDid, (r) => r.escrow_id === escrow.id)
      await page.getByRole('button', { name: 'Check again' }).click()
      await page
        .locator('[data-testid=receipts] .receipt[data-type="escrow.released"] [data-verdict=verified]')
        .waitFor()
      for (const section of ['sla', 'version', 'capacity', 'config', 'files', 'connections'])
        await page.getByTestId(section).locator('dl, table, .empty, .hint').first().waitFor()
      assert.equal(await page.locator('main .error').count(), 0)
      await shot('2-engagement-detail')

      // a newer version of the agent: its addendum shown and signed in the browser, then accepted
      const released = await stack.call(
        stack.bob,
        'POST',
        `/api/agents/${encodeURIComponent(agentDid)}/versions`,
        {
          version: '1.1.0',
          changelog: 'Shorter summaries.',
          card_hash: `sha256:${'2'.repeat(64)}`,
        },
      )
      assert.equal(released.status, 200, released.text)
      await page.reload()
      await page.getByTestId('version').locator('.signable .ok').waitFor()
      await page.getByRole('button', { name: 'Sign the addendum and accept' }).click()
      await page.getByTestId('version').locator('strong', { hasText: '1.1.0' }).waitFor()
      const version = (await stack.call(stack.alice, 'GET', `/api/engagements/${engagementId}/version`)).body
      assert.equal(version.version, '1.1.0')

      // a dispute on the task: opened with an amount and a reason, then withdrawn
      await go(`tasks/${taskId}`)
      await page.getByRole('button', { name: 'Open a dispute…' }).click()
      await page.fill('#dispute-amount', '0.50')
      await page.fill('#dispute-reason', 'The summary left out the second sentence.')
      await page.getByRole('button', { name: 'Open the dispute' }).click()
      const dispute = (state: string) => page.locator(`[data-testid=task-disputes] tr[data-state=${state}]`)
      await dispute('open').waitFor()
      const disputes = (await stack.call(stack.alice, 'GET', '/api/disputes')).body as {
        disputes: Array<{
          id: string
          task_id: string
          state: string
          amount: { amount_fils: number }
          reason: string
        }>
      }
      assert.deepEqual(
        disputes.disputes.map((d) => [d.task_id, d.state, d.amount.amount_fils, d.reason]),
        [[taskId, 'open', 50, 'The summary left out the second sentence.']],
      )
      await shot('3-dispute-open')
      await dispute('open').getByRole('button', { name: 'Withdraw' }).click()
      await dispute('withdrawn').waitFor()
      // a refund of part of the released payment, asked from the same page
      await page.getByRole('button', { name: 'Ask for a refund…' }).click()
      await page.fill('#refund-amount', '0.25')
      await page.fill('#refund-reason', 'One sentence of two was summarized.')
      await page.getByRole('button', { name: 'Ask for the refund' }).click()
      await page.locator('[data-testid=task-refunds] tr[data-state=requested]', { hasText: 'AED' }).waitFor()

      // an invoice for the engagement's released payment, its PDF downloaded
      await go('invoices')
      await page.selectOption('#invoice-engagement', engagementId)
      await page.getByRole('button', { name: 'Issue the invoice' }).click()
      const pdfLink = page.getByTestId('invoices').getByRole('link', { name: /PDF/ })
      const download = page.waitForEvent('download')
      await pdfLink.click()
      const pdf = readFileSync((await (await download).path())!)
      assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-')
      await shot('4-invoices')

      // the other screens answer without an error: a statement, and the empty states of the rest
      await go('statements')
      await page.getByTestId('movements').filter({ hasText: 'Released' }).waitFor()
      for (const name of ['disputes', 'incidents', 'teams', 'batches']) {
        await go(name)
        await page.locator('main table.list, main .empty').first().waitFor()
        assert.equal(await page.locator('main .error').count(), 0, name)
      }

      // a batch, its progress shown until it has run
      await go('batches')
      await page.selectOption('#batch-engagement', engagementId)
      await page.fill('#batch-items', 'First short text to summarize.\nSecond short text to summarize.')
      await page.getByRole('button', { name: 'Run the batch' }).click()
      await page.locator('[data-testid=batches] tr[data-batch] progress').waitFor()
      await page.locator('[data-testid=batches] tr[data-batch][data-state=completed]').waitFor()
      await shot('5-batches')
      // the batch's tasks brought escrows of their own: signed here, then each waits for its release
      await go(`engagements/${engagementId}`)
      await page.getByTestId('escrows-to-sign').locator('.signable .ok').first().waitFor()
      await page.getByRole('button', { name: 'Sign these escrows' }).click()
      await page.getByTestId('escrows-to-sign').waitFor({ state: 'detached' })
      assert.equal(await page.locator('[data-testid=releases] li[data-escrow]').count(), 2)

      // Arabic: right to left, the invoice's amounts in Arabic digits
      await page.selectOption('#lang', 'ar')
      await go('invoices')
      assert.equal(await page.getAttribute('html', 'dir'), 'rtl')
      const total = page.getByTestId('invoices').locator('.money').first()
      await total.filter({ hasText: ARABIC_DIGIT }).waitFor()
      await go(`engagements/${engagementId}`)
      await page
        .locator('[data-testid=receipts] [data-verdict=verified]', { hasText: 'تم التحقق' })
        .first()
        .waitFor()
      await shot('6-engagement-arabic')
      assert.deepEqual(errors, [])
    },
  )

  it(
    'a person searches the market, opens a listing, tries it free, hires it from the trial, and creates a budget, a webhook and a schedule (refusals in words), in English and Arabic',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const agentDid = await stack.agentOf('job_summary')
      // bob, an operator, publishes a listing of the summary agent with two free tasks
      const published = await stack.call(stack.bob, 'POST', '/api/market/listings', {
        agent_did: agentDid,
        title: 'Kestrel summaries',
        description: 'Short summaries of long texts.',
        price_fils: 2500,
        tags: ['writing'],
        sla: { trial_tasks: 2, response_seconds: 60 },
      })
      assert.equal(published.status, 200, published.text)
      const listingId = (published.body as { id: string }).id
      errors.length = 0

      // the search: a word of the title, a price range in AED
      await page.selectOption('#lang', 'en')
      await go('market')
      await page.fill('#ls-q', 'kestrel')
      await page.fill('#ls-max_price', '30')
      await page.getByTestId('listing-search').getByRole('button', { name: 'Search' }).click()
      await page.locator(`[data-testid=listings] [data-listing="${listingId}"]`).waitFor()
      await page.fill('#ls-max_price', '10')
      await page.getByTestId('listing-search').getByRole('button', { name: 'Search' }).click()
      await page.locator('main .empty', { hasText: 'No listing matches' }).waitFor()
      await page.fill('#ls-max_price', '')
      await page.getByTestId('listing-search').getByRole('button', { name: 'Search' }).click()
      await page.getByRole('link', { name: 'Kestrel summaries' }).click()
      await page.waitForURL(new RegExp(`#/market/listings/${listingId}$`))
      const listing = page.getByTestId('listing')
      await listing.locator('.money', { hasText: 'AED' }).first().waitFor()
      await page.getByTestId('terms').locator('dt', { hasText: 'trial_tasks' }).waitFor()
      await page.getByTestId('rating').waitFor()
      await shot('7-listing')

      // the trial: started here, a free task run with its output, then hired and signed
      await page.getByRole('button', { name: 'Try it free' }).click()
      await page.waitForURL(/#\/trials\/trl_|#\/trials\//)
      await page.getByTestId('tasks-left').filter({ hasText: '2 of 2' }).waitFor()
      await page.fill('#trial-text', 'The trial runs a free task. Its output is shown here.')
      await page.getByRole('button', { name: 'Run the free task' }).click()
      await page.getByTestId('trial-output').waitFor()
      await page.getByTestId('tasks-left').filter({ hasText: '1 of 2' }).waitFor()
      await shot('8-trial')
      // the listing now leads back to its live trial instead of starting another
      await go(`market/listings/${listingId}`)
      await page.getByTestId('live-trial').getByRole('link').click()
      await page.getByTestId('tasks-left').filter({ hasText: '1 of 2' }).waitFor()
      await page.getByRole('button', { name: 'Hire', exact: true }).click()
      await page.waitForURL(/#\/engagements\/eng_/)
      await page.getByRole('button', { name: /Sign the agreement/ }).click()
      await page.getByTestId('engagement-state').filter({ hasText: 'active' }).waitFor()
      const engagementId = page.url().split('/').pop()!

      // a budget: the API's refusal in words (an engagement it does not know), then made and listed
      await go('budgets')
      await page.fill('#budget-limit', '120.50')
      await page.selectOption('#budget-scope', 'engagement')
      await page.fill('#budget-target', 'eng_not_here')
      await page.getByRole('button', { name: 'Create the budget' }).click()
      const refused = page.getByTestId('budget-form').locator('.error')
      await refused.waitFor()
      assert.doesNotMatch((await refused.textContent())!, /body\.|\/api\/|eng_not_here/)
      await page.selectOption('#budget-scope', 'organization')
      await page.fill('#budget-name', 'Monthly cap')
      await page.getByRole('button', { name: 'Create the budget' }).click()
      await page.getByTestId('budgets').locator('tr', { hasText: 'Monthly cap' }).waitFor()

      // a webhook: an address that is not https stopped at its field, then one made, its secret shown once
      await go('webhooks')
      await page.fill('#webhook-url', 'ftp://hooks.example/in')
      await page.getByRole('button', { name: 'Create the webhook' }).click()
      await page.locator('#webhook-url-problem', { hasText: 'https://' }).waitFor()
      await page.fill('#webhook-url', `${stack.rental.url}/hook`)
      await page.fill('#webhook-events', 'sla.breached, budget.threshold')
      await page.getByRole('button', { name: 'Create the webhook' }).click()
      const secret = page.getByTestId('webhook-secret')
      await secret
        .filter({ hasText: 'will not be shown again' })
        .locator('code', { hasText: /^whsec_/ })
        .waitFor()
      await page.getByTestId('webhooks').locator('tr', { hasText: '/hook' }).waitFor()

      // a schedule on the hired engagement: a bad expression refused, then its next runs
      await go('schedules')
      await page.selectOption('#schedule-engagement', engagementId)
      await page.fill('#schedule-text', 'A weekly summary.')
      await page.fill('#schedule-cron', 'every monday')
      await page.getByRole('button', { name: 'Create the schedule' }).click()
      await page.locator('#schedule-cron-problem', { hasText: 'five fields' }).waitFor()
      // five fields the rental refuses: its code's sentence
      await page.fill('#schedule-cron', '61 9 * * 1')
      await page.getByRole('button', { name: 'Create the schedule' }).click()
      await page.getByTestId('schedule-form').locator('.error', { hasText: 'five fields' }).waitFor()
      await page.fill('#schedule-cron', '0 9 * * 1')
      await page.fill('#schedule-timezone', 'Asia/Dubai')
      await page.getByRole('button', { name: 'Create the schedule' }).click()
      await page.getByTestId('schedule-next').filter({ hasText: 'Monday' }).waitFor()
      assert.equal(await page.getByTestId('schedule-next').locator('li time').count(), 5)
      await page.getByTestId('schedules').locator('tr', { hasText: '0 9 * * 1' }).waitFor()
      await shot('9-schedules')

      // Arabic: the listing right to left, its price in Arabic digits
      await page.selectOption('#lang', 'ar')
      await go(`market/listings/${listingId}`)
      assert.equal(await page.getAttribute('html', 'dir'), 'rtl')
      await page.getByTestId('listing').locator('.money').filter({ hasText: ARABIC_DIGIT }).first().waitFor()
      await page.getByRole('button', { name: 'جرّبه مجاناً' }).waitFor()
      await shot('10-listing-arabic')
      await page.selectOption('#lang', 'en')
      // only the refusals asked for answered an error (the ftp:// webhook is stopped in the form)
      assert.deepEqual(
        errors.map((e) => e.replace(/ http.*\/api\//, ' /api/')),
        ['404 /api/budgets?lang=en', '400 /api/schedules'],
      )
    },
  )
})
