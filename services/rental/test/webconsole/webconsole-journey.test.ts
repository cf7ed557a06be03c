import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { chromiumPath, NO_CHROMIUM } from '@svc/testing/chromium'
import {
  ARABIC,
  axeFindings,
  openScreen,
  PHONE,
  say,
  signInToConsole,
  startConsoleBrowser,
} from '../support/console-browser.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()
const WIDE = { width: 1280, height: 800 }

/**
 * What a person must not meet on a screen: a schema path, a route, an id or a DID as a label (small
 * print with its copy button aside), raw fils.
 */
const NOT_FOR_PEOPLE: Array<[string, RegExp]> = [
  ['a schema path', /\bbody\./],
  ['a route', /\/api\/|\/v1\//],
  ['a task id', /\btsk_/],
  ['an engagement id', /\beng_/],
  ['a DID', /did:key:/],
  ['raw fils', /\bfils\b|_fils\b/i],
]

describe(
  'a person’s whole journey in the console (Chromium): sign in, hire, run, verify, pay, invoice, dispute, manage, batch, fund; in English, Arabic and on a phone',
  { skip: executable ? false : NO_CHROMIUM },
  () => {
    let stack: FullStack
    let browser: Browser
    let page: Page
    const shots = process.env.SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), 'console-journey-'))
    let errors: string[] = []
    const found: string[] = []

    before(async () => {
      // the ledger waits a moment before it takes a batch in: a fresh receipt is on its way for a while
      stack = await startFullStack({}, { ledgerEnv: { LEDGER_BATCH_WAIT_MS: '1500' } })
      mkdirSync(shots, { recursive: true })
      console.log(`console journey screenshots: ${shots}`)
      ;({ browser, page, errors } = await startConsoleBrowser(stack, {
        viewport: WIDE,
        signedIn: false,
        recordVerdicts: true,
        acceptDownloads: true,
      }))
    })
    after(async () => {
      await browser?.close()
      await stack.close()
    })

    const go = (route: string, lang: 'en' | 'ar' = 'en') => openScreen(page, stack, route, lang)
    const shot = (name: string, fullPage = true) =>
      page.screenshot({ path: join(shots, `${name}.png`), fullPage })
    /** What the screen shows without scrolling (README's pictures: docs/screenshots/), `at` brought into view first. */
    const view = async (name: string, at?: string) => {
      if (at)
        await page
          .locator(at)
          .first()
          .evaluate((el) => el.scrollIntoView({ block: 'center' }))
      await page.screenshot({ path: join(shots, `view-${name}.png`) })
    }
    const toast = () => page.getByTestId('toasts').locator('.toast').last()
    /** The words a person reads on the screen: the header and main, without the small print of ids (copy buttons). */
    const readable = () =>
      page.evaluate(`(() => {
        const small = [...document.querySelectorAll('main .id-line')]
        const kept = small.map((el) => el.style.display)
        small.forEach((el) => (el.style.display = 'none'))
        const text = document.querySelector('header').innerText + '\\n' + document.querySelector('main').innerText
        small.forEach((el, i) => (el.style.display = kept[i]))
        return text
      })()`) as Promise<string>
    /** Axe on the screen (no serious or critical violation) and no internals as words; a screenshot. */
    const check = async (name: string) => {
      for (const v of await axeFindings(page)) found.push(`${name}: ${v}`)
      const text = await readable()
      for (const [what, pattern] of NOT_FOR_PEOPLE) {
        const hit = pattern.exec(text)
        if (hit) found.push(`${name}: ${what} (“${text.slice(Math.max(0, hit.index - 40), hit.index + 40)}”)`)
      }
      await shot(name)
    }

    it('goes from sign-in to a verified, paid, invoiced and disputed task, then manages the organization', async () => {
      const agentDid = await stack.agentOf('job_summary')
      const colleague = await stack.call(stack.alice, 'POST', '/v1/users', {
        email: 'colleague@journey.example',
        role: 'member',
      })
      assert.equal(colleague.status, 201, colleague.text)

      // sign in at the idp; the header names the person and the organization (never its id)
      await signInToConsole(page, stack)
      await page.getByTestId('person').waitFor()
      const org = (await stack.call(stack.alice, 'GET', '/v1/org?lang=en')).body as {
        id: string
        name: string
      }
      await page.getByTestId('header-org').filter({ hasText: org.name }).waitFor()
      await check('01-home')

      // the market: jobs with their agents by name; the DID only in small print
      await go('market')
      const offer = page.locator(`[data-job=job_summary] .agent[data-agent="${agentDid}"]`)
      const agentName = (await offer.getByTestId('agent-name').textContent())!
      assert.equal(agentName, 'Summariser')
      await check('02-market')
      await view('market', '[data-job=job_summary]')

      // hire: one sentence says what is signed before the fields, and nothing is signed before asked
      await offer.getByRole('button', { name: say('en', 'market.hire', { agent: agentName }) }).click()
      await page.waitForURL(/#\/engagements\/eng_/)
      const engagementId = page.url().split('/').pop()!
      const summary = page.getByTestId('sign-summary').first()
      await summary.waitFor()
      assert.match((await summary.textContent())!, /^You pay AED\s[\d,]+\.\d\d per task to Summariser/)
      await check('03-engagement-sign')
      await view('engagement-sign', '[data-testid=sign-summary]')
      await page.getByRole('button', { name: /Sign the agreement/ }).click()
      await page
        .getByTestId('engagement-state')
        .filter({ hasText: say('en', 'eng.state.active') })
        .waitFor()

      // a task: named by its job, its receipt pending, then verified by itself (never red)
      await page.fill(
        '#task-text',
        'Summarise: the journey of a person through the console, from hire to invoice.',
      )
      await page.getByRole('button', { name: say('en', 'task.run') }).click()
      await page.waitForURL(/#\/tasks\/tsk_/)
      const taskId = page.url().split('/').pop()!
      await page.locator('[data-testid=task-state][data-state=completed]').waitFor()
      await page.locator('[data-testid=receipts] [data-verdict=verified]').waitFor({ timeout: 30_000 })
      const verdicts = (await page.evaluate('window.__verdicts')) as string[]
      assert.ok(verdicts.includes('pending'), `pending before verified: ${verdicts.join(' → ')}`)
      assert.ok(!verdicts.includes('not-verified'), `never red: ${verdicts.join(' → ')}`)
      await check('04-task-verified')
      await view('task-verified', '[data-testid=receipts]')

      // the release: one sentence, signed in the browser, its receipt verified by itself
      await go(`engagements/${engagementId}`)
      const releases = page.getByTestId('releases')
      await releases
        .getByTestId('sign-summary')
        .filter({ hasText: /You pay AED/ })
        .waitFor()
      await releases.getByRole('button', { name: /Sign and release/ }).click()
      await releases.locator('.empty').waitFor()
      await page
        .locator('[data-testid=receipts] .receipt[data-type="escrow.released"] [data-verdict=verified]')
        .waitFor({ timeout: 30_000 })
      assert.ok(
        !((await page.evaluate('window.__verdicts')) as string[]).includes('not-verified'),
        'never red',
      )
      await check('05-engagement-released')

      // an invoice for the released payment, its PDF downloaded
      await go('invoices')
      await page.selectOption('#invoice-engagement', engagementId)
      await page.getByRole('button', { name: say('en', 'invoice.issue') }).click()
      const download = page.waitForEvent('download')
      await page.getByTestId('invoices').getByRole('link', { name: /PDF/ }).first().click()
      assert.equal(
        readFileSync((await (await download).path())!)
          .subarray(0, 5)
          .toString('latin1'),
        '%PDF-',
      )
      await check('06-invoices')

      // a dispute and a refund on the task: each says in one sentence what it asks before it is sent
      await go(`tasks/${taskId}`)
      await page.getByRole('button', { name: say('en', 'dispute.open_button') }).click()
      await page.fill('#dispute-amount', '0.50')
      await page.fill('#dispute-reason', 'The summary left out the invoice.')
      assert.match(
        (await page.getByTestId('dispute-summary').textContent())!,
        /^You dispute AED\s0\.50 of the AED\s[\d.,]+ for “Document summary” with Summariser\./,
      )
      await page.getByRole('button', { name: say('en', 'dispute.submit') }).click()
      await page.locator('[data-testid=task-disputes] tr[data-state=open]').waitFor()
      await page.getByRole('button', { name: say('en', 'refund.open_button') }).click()
      await page.fill('#refund-amount', '0.25')
      assert.match(
        (await page.getByTestId('refund-summary').textContent())!,
        /^You ask Summariser to give back AED\s0\.25 of the AED\s[\d.,]+ you paid for “Document summary”\./,
      )
      await check('07-task-dispute-refund')
      await page.getByRole('button', { name: say('en', 'cancel') }).click()

      // the statement: each line's task by name
      await go('statements')
      const movements = page.getByTestId('movements')
      await movements.filter({ hasText: say('en', 'statement.kind.release') }).waitFor()
      await movements.getByTestId('task-name').filter({ hasText: 'Document summary' }).first().waitFor()
      await check('08-statement')

      // members and roles: a role changed and undone, roles in words
      await go('members')
      const row = page.locator('[data-member="colleague@journey.example"]')
      await row.locator('select').selectOption('billing')
      await row.getByRole('button', { name: say('en', 'member.change_role') }).click()
      await row.getByRole('button', { name: say('en', 'member.yes_role') }).click()
      await toast()
        .getByRole('button', { name: say('en', 'toast.undo') })
        .click()
      await toast()
        .filter({ hasText: say('en', 'toast.undone') })
        .waitFor()
      await page.locator('[data-testid=roles] [data-role=admin]').getByText(say('en', 'perm.hire')).waitFor()
      await check('09-members-roles')

      // a batch: its cost said first, run, opened, each item named by its text, downloaded
      await go('batches')
      await page.selectOption('#batch-engagement', engagementId)
      await page.fill('#batch-items', 'First text of the batch to summarise.\nSecond text of the batch.')
      await page
        .getByTestId('cost-preview')
        .filter({ hasText: /2 tasks × AED/ })
        .waitFor()
      await page.getByRole('button', { name: say('en', 'batch.run') }).click()
      await page.locator('[data-testid=batches] tr[data-batch] a').first().click()
      await page.locator('[data-testid=batch][data-state=completed]').waitFor({ timeout: 30_000 })
      await page
        .getByTestId('item-task')
        .filter({ hasText: 'First text of the batch to summarise.' })
        .waitFor()
      const csv = page.waitForEvent('download')
      await page.getByTestId('download-csv').click()
      const lines = readFileSync((await (await csv).path())!, 'utf8')
        .trim()
        .split('\n')
      assert.match(lines[0]!, /^index,state,task_id/)
      assert.equal(lines.length, 3)
      await check('10-batch')

      // the wallet: demo money in development, clearly labelled, said in a toast
      await go('wallet')
      await page.getByTestId('add-funds').getByText(say('en', 'wallet.demo_badge'), { exact: true }).waitFor()
      await page.fill('#top-up-amount', '100')
      await page.getByRole('button', { name: say('en', 'wallet.add_demo') }).click()
      await toast()
        .filter({ hasText: /AED\s100\.00/ })
        .waitFor()
      await check('11-wallet')

      // executions and approvals name the task and the agent
      await go('executions')
      const execution = page.locator(`[data-testid=executions] tr[data-task="${taskId}"]`)
      assert.equal((await execution.getByTestId('task-name').textContent())!.trim(), 'Document summary')
      await execution.getByText(agentName).first().waitFor()
      await check('12-executions')
      // a task the engagement's policy holds: the approval names it by its job and its input
      const policy = await stack.call(stack.alice, 'POST', `/api/engagements/${engagementId}/config`, {
        approval: { mode: 'always' },
      })
      assert.equal(policy.status, 200, policy.text)
      const held = await stack.call(stack.alice, 'POST', '/api/tasks', {
        engagement_id: engagementId,
        text: 'Summarise the quarterly report before the board meets.',
      })
      assert.equal(held.status, 200, held.text)
      await go('approvals')
      const approval = page.locator(`[data-testid=approvals] tr`, { hasText: 'quarterly report' })
      assert.equal((await approval.getByTestId('task-name').textContent())!.trim(), 'Document summary')
      await check('13-approvals')

      // and every other screen of the sidebar, as they stand after this journey
      for (const route of [
        'engagements',
        'tasks',
        'schedules',
        'budgets',
        'refunds',
        'disputes',
        'usage',
        'incidents',
        'teams',
        'org',
        'onboarding',
        'webhooks',
        'connections',
        'profile',
        'danger',
      ]) {
        await go(route)
        await check(`14-${route}`)
      }
      assert.deepEqual(found, [])
      assert.deepEqual(errors, [])
    })

    it('shows the key screens in Arabic and on a phone, with the same checks', async () => {
      const tasks = (await stack.call(stack.alice, 'GET', '/api/tasks?limit=100&lang=ar')).body
        .tasks as Array<{
        id: string
        job_title: string
        engagement_id: string
        input_text: string | null
      }>
      const task = tasks.find((t) => t.input_text?.startsWith('Summarise: the journey'))!
      await go(`tasks/${task.id}`, 'ar')
      assert.equal(await page.getAttribute('html', 'dir'), 'rtl')
      await page.getByTestId('task-title').filter({ hasText: task.job_title }).waitFor()
      assert.match(task.job_title, ARABIC)
      await page.locator('[data-testid=receipts] [data-verdict=verified]').first().waitFor()
      await check('20-task-ar')
      await view('task-ar')
      for (const [route, name] of [
        ['market', '21-market-ar'],
        [`engagements/${task.engagement_id}`, '22-engagement-ar'],
        ['statements', '23-statement-ar'],
        ['executions', '24-executions-ar'],
      ] as const) {
        await go(route, 'ar')
        await check(name)
      }
      await page.setViewportSize(PHONE)
      for (const lang of ['en', 'ar'] as const)
        for (const route of ['home', `tasks/${task.id}`, 'market', 'batches']) {
          await go(route, lang)
          if (route.startsWith('tasks/'))
            await page.locator('[data-testid=receipts] [data-verdict=verified]').first().waitFor()
          await check(`30-phone-${lang}-${route.split('/')[0]}`)
          if (route !== 'batches') await view(`phone-${lang}-${route.split('/')[0]}`)
          // nothing a person taps is cut off at the screen's edges
          const out =
            (await page.evaluate(`[...document.querySelectorAll('main button, main a, main input, main select')]
            .filter((el) => { const b = el.getBoundingClientRect(); return b.width > 0 && (b.left < -1 || b.right > innerWidth + 1) })
            .map((el) => el.outerHTML.slice(0, 80))`)) as string[]
          assert.deepEqual(out, [], `${lang} #/${route} on a phone`)
        }
      await page.setViewportSize(WIDE)
      assert.deepEqual(found, [])
      assert.deepEqual(errors, [])
    })

    it('says once that the session ended, with one way to sign in again', async () => {
      await go('tasks')
      await page.context().clearCookies()
      await page.evaluate(`location.hash = '#/executions'`)
      await page.getByTestId('signed-out').waitFor()
      await page.waitForLoadState('networkidle')
      assert.equal(await page.locator('main .error, main [role=alert], .toast.error').count(), 1)
      assert.equal(await page.getByRole('button', { name: say('en', 'session.sign_in_again') }).count(), 1)
      await shot('40-signed-out')
    })
  },
)
