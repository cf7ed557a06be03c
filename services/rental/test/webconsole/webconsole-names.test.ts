import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { chromiumPath, NO_CHROMIUM } from '@svc/testing/chromium'
import {
  ARABIC,
  axeFindings,
  openScreen,
  say,
  sessionCookie,
  startConsoleBrowser,
  WIDE,
} from '../support/console-browser.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()
/** Screenshots for a reviewer (ignored by git), beside the other webconsole tests'. */
const SHOTS = fileURLToPath(new URL('../.screenshots/', import.meta.url))
/** What a person must not meet as a label: ids, DIDs, enum names. */
const INTERNAL_LABEL = /tsk_|eng_|did:key|TASK_STATE_/

interface TaskAnswer {
  id: string
  job_title: string | null
  agent_name: string | null
  state: string
  price: { amount_fils: number; display: string }
  escrow_state: string | null
  input_text: string | null
  duration_ms: number | null
}

describe('the web console names things: jobs and agents, money, payment states, what is signed, receipts on their way, usage that agrees', () => {
  let stack: FullStack
  let browser: Browser | undefined
  let page: Page
  let errors: string[] = []

  before(async () => {
    // the ledger waits a moment before it takes a batch in: a fresh receipt is on its way for a while
    stack = await startFullStack({}, { ledgerEnv: { LEDGER_BATCH_WAIT_MS: '2500' } })
    mkdirSync(SHOTS, { recursive: true })
    if (!executable) return
    ;({ browser, page, errors } = await startConsoleBrowser(stack, { recordVerdicts: true }))
  })
  after(async () => {
    await browser?.close()
    await stack.close()
  })

  const shot = (name: string) => page.screenshot({ path: `${SHOTS}names-${name}.png`, fullPage: true })
  const open = (route: string, lang: 'en' | 'ar' = 'en') => openScreen(page, stack, route, lang)
  const text = async (selector: string) => ((await page.locator(selector).first().textContent()) ?? '').trim()
  const task = async (id: string, lang: 'en' | 'ar') =>
    (await stack.call(stack.alice, 'GET', `/api/tasks/${id}?lang=${lang}`)).body as unknown as TaskAnswer

  it(
    'a person hires, reads what they sign in one sentence, runs a task and sees it by name, money and payment state; its receipt pending, then verified; in English and Arabic',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const agentDid = await stack.agentOf('job_summary')
      const found: string[] = []

      // hire in the browser: the summary sentence stands before the fields, and before any signature
      await open('market')
      const signatures: string[] = []
      page.on('request', (r) => {
        if (r.method() === 'POST' && r.url().includes('/signatures')) signatures.push(r.url())
      })
      await page
        .locator(`[data-job=job_summary] .agent[data-agent="${agentDid}"]`)
        .getByRole('button', { name: /^Hire / })
        .click()
      await page.waitForURL(/#\/engagements\/eng_/)
      const engagementId = page.url().split('/').pop()!
      const detail = (await stack.call(stack.alice, 'GET', `/api/engagements/${engagementId}?lang=en`))
        .body as {
        engagement: { job_title: string; agent_name: string; provider_name: string }
      }
      assert.ok(
        detail.engagement.job_title && detail.engagement.agent_name && detail.engagement.provider_name,
      )
      const summary = page.getByTestId('sign-summary').first()
      await summary.waitFor()
      const sentence = (await summary.textContent())!
      assert.match(sentence, /^You pay AED\s[\d,]+\.\d\d per task to /)
      for (const part of [
        detail.engagement.agent_name,
        detail.engagement.job_title,
        detail.engagement.provider_name,
      ])
        assert.ok(sentence.includes(part), `${part} in “${sentence}”`)
      assert.match(sentence, /p95 within 30 seconds; 5% credited per breach; output kept 1 hour/)
      assert.doesNotMatch(sentence, INTERNAL_LABEL)
      // the exact fields stay behind the disclosure; the escrow has its own sentence
      assert.equal(await page.locator('.signable details[open]').count(), 0)
      assert.equal(await page.locator('.signable dl.terms').first().isVisible(), false)
      assert.match((await page.getByTestId('sign-summary').nth(1).textContent())!, /is held from your wallet/)
      assert.equal(await text('[data-testid=engagement-title]'), detail.engagement.job_title)
      assert.equal(await text('[data-testid=engagement-agent]'), detail.engagement.agent_name)
      assert.deepEqual(signatures, [], 'nothing signed before the person asks')
      found.push(...(await axeFindings(page)).map((v) => `sign: ${v}`))
      await shot('1-sign-en')
      await page.getByRole('button', { name: /Sign the agreement/ }).click()
      await page.getByTestId('engagement-state').filter({ hasText: 'active' }).waitFor()

      // a task from the browser: its page names the job, the agent, the money and the payment
      const input = 'Summarise: names, not ids. A person reads the job, the agent and the price.'
      await page.fill('#task-text', input)
      await page.getByRole('button', { name: say('en', 'task.run') }).click()
      await page.waitForURL(/#\/tasks\/tsk_/)
      const taskId = page.url().split('/').pop()!
      await page.locator('[data-testid=task-state][data-state=completed]').waitFor()
      const en = await task(taskId, 'en')
      assert.equal(await text('[data-testid=task-title]'), en.job_title)
      assert.equal(await text('[data-testid=task-agent]'), en.agent_name)
      assert.equal(await text('main [data-testid=task-price]'), en.price.display)
      await page.locator(`[data-testid=task-payment][data-escrow=${en.escrow_state}]`).waitFor()
      assert.equal(await text('[data-testid=task-payment]'), say('en', `pay.${en.escrow_state}`))
      assert.equal(await text('[data-testid=input]'), input)
      assert.equal(await page.getByTestId('input').getAttribute('dir'), 'auto')
      assert.equal(await page.getByTestId('output').getAttribute('dir'), 'auto')
      assert.match(await text('[data-testid=task-duration]'), /\d/)
      assert.doesNotMatch(await text('main h1'), INTERNAL_LABEL)
      assert.doesNotMatch(await text('[data-testid=events]'), /TASK_STATE_/)
      // the ids stay at hand in small print
      assert.ok((await page.locator('.id-line code').allTextContents()).includes(taskId))

      // the receipt: on its way (neutral, checked again by itself), then verified; never red
      await page
        .locator('[data-verdict=verified]')
        .waitFor({ timeout: 30_000 })
        .catch(async (e: Error) => {
          await shot('debug-receipt')
          const receipts = (
            await stack.call(stack.alice, 'GET', `/api/agents/${agentDid}/receipts?limit=100`)
          ).body
          throw new Error(
            `${e.message}\n${await text('[data-testid=receipts]')}\n${JSON.stringify(await page.evaluate('window.__verdicts'))}\n${JSON.stringify(receipts).slice(0, 3000)}`,
          )
        })
      const verdicts = (await page.evaluate('window.__verdicts')) as string[]
      assert.ok(verdicts.includes('pending'), `pending before verified: ${verdicts.join(' → ')}`)
      assert.ok(!verdicts.includes('not-verified'), `never red: ${verdicts.join(' → ')}`)
      assert.equal(verdicts[verdicts.length - 1], 'verified')
      found.push(...(await axeFindings(page)).map((v) => `task: ${v}`))
      await shot('2-task-en')

      // the task list: the job's name, the input's first words and money; no id as a label
      await open('tasks')
      const row = page.locator(`[data-task="${taskId}"]`)
      await row.waitFor()
      assert.equal((await row.getByTestId('task-name').textContent())!.trim(), en.job_title)
      assert.match((await row.locator('.preview').textContent())!, /^Summarise: names, not ids/)
      assert.equal((await row.getByTestId('task-price').textContent())!.trim(), en.price.display)
      assert.doesNotMatch((await page.getByTestId('tasks').textContent())!, INTERNAL_LABEL)
      found.push(...(await axeFindings(page)).map((v) => `tasks: ${v}`))
      await shot('3-tasks-en')

      // Arabic: the same screens in Arabic words, the names and money as the API writes them in Arabic
      const ar = await task(taskId, 'ar')
      await open(`tasks/${taskId}`, 'ar')
      await page.locator('[data-testid=task-state][data-state=completed]').waitFor()
      assert.equal(await text('[data-testid=task-title]'), ar.job_title)
      assert.equal(await text('[data-testid=task-agent]'), ar.agent_name)
      assert.equal(await text('main [data-testid=task-price]'), ar.price.display)
      assert.match(ar.price.display, ARABIC)
      assert.equal(await text('[data-testid=task-payment]'), say('ar', `pay.${ar.escrow_state}`))
      assert.equal(await text('[data-testid=task-state]'), say('ar', 'state.completed'))
      await page.locator('[data-verdict=verified]').waitFor()
      found.push(...(await axeFindings(page)).map((v) => `task ar: ${v}`))
      await shot('4-task-ar')
      await open('tasks', 'ar')
      await row.waitFor()
      assert.equal((await row.getByTestId('task-name').textContent())!.trim(), ar.job_title)
      assert.doesNotMatch((await page.getByTestId('tasks').textContent())!, INTERNAL_LABEL)
      await shot('5-tasks-ar')

      // what is signed, in Arabic: a second engagement waiting for its signature
      const hired = await stack.call(stack.alice, 'POST', '/api/engagements?lang=ar', {
        job_id: 'job_summary',
        agent_did: agentDid,
        client_did: (await page.evaluate(
          `import('/console/assets/keys.js').then(async (keys) => (await keys.currentKey()).did)`,
        )) as string,
      })
      assert.equal(hired.status, 200, hired.text)
      const pending = (hired.body as { engagement: { id: string; agent_name: string; job_title: string } })
        .engagement
      await open(`engagements/${pending.id}`, 'ar')
      const arabicSentence = (await page.getByTestId('sign-summary').first().textContent())!
      assert.match(arabicSentence, /^تدفع /)
      assert.ok(arabicSentence.includes(pending.agent_name), arabicSentence)
      assert.ok(arabicSentence.includes(pending.job_title), arabicSentence)
      assert.doesNotMatch(arabicSentence, INTERNAL_LABEL)
      found.push(...(await axeFindings(page)).map((v) => `sign ar: ${v}`))
      await shot('6-sign-ar')

      assert.deepEqual(found, [])
      assert.deepEqual(errors, [])
    },
  )

  it(
    'Organization → Overview and Usage show the same month’s counts and sums, in English and Arabic',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      // a task of this month, beside the first test's
      const agentDid = await stack.agentOf('job_summary')
      const engagementId = await stack.hireAndSign(stack.alice, 'job_summary', agentDid, stack.newClientKey())
      const done = await stack.call(stack.alice, 'POST', '/api/tasks', {
        engagement_id: engagementId,
        text: 'Summarise: the usage screens agree.',
      })
      assert.equal(done.status, 200, done.text)
      const usage = (await stack.call(stack.alice, 'GET', '/api/usage')).body as {
        tasks: number
        spend: { amount_fils: number }
      }
      const org = (await stack.call(stack.alice, 'GET', '/v1/org')).body as {
        usage: { tasks: number; spend_fils: number }
      }
      assert.ok(usage.tasks >= 1)
      assert.equal(usage.tasks, org.usage.tasks)
      assert.equal(usage.spend.amount_fils, org.usage.spend_fils)

      for (const lang of ['en', 'ar'] as const) {
        await open('org', lang)
        const overview = page.getByTestId('org-usage')
        await overview.waitFor()
        const [tasks, fils] = [
          await overview.getAttribute('data-tasks'),
          await overview.getAttribute('data-fils'),
        ]
        const overviewMoney = (await overview.locator('.money').textContent())!.trim()
        await open('usage', lang)
        const total = page.getByTestId('usage-total')
        await total.waitFor()
        assert.equal(await total.getAttribute('data-tasks'), tasks)
        assert.equal(await total.getAttribute('data-fils'), fils)
        assert.equal(Number(tasks), usage.tasks)
        assert.ok((await total.textContent())!.includes(overviewMoney), `${overviewMoney} on both screens`)
        await shot(`7-usage-${lang}`)
      }
      assert.deepEqual(errors, [])
    },
  )

  it(
    'a key counts as backed up only once its file is saved: a cancelled save says the key is only in this browser and offers it again',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      // a fresh browser profile whose save dialog (File System Access) the person first closes,
      // then uses: the dialog is the browser's, so it is played here; the console's code is not
      const context = await browser!.newContext({ viewport: WIDE })
      await context.addCookies([sessionCookie(stack)])
      await context.addInitScript(`
        window.__saved = null
        let asked = 0
        window.showSaveFilePicker = async () => {
          asked++
          if (asked === 1) throw new DOMException('The user aborted a request.', 'AbortError')
          return { createWritable: async () => ({ write: async (text) => { window.__saved = text }, close: async () => {} }) }
        }`)
      const fresh = await context.newPage()
      fresh.setDefaultTimeout(15_000)
      fresh.on('pageerror', (e) => errors.push(e.message))
      const lang = 'en'
      await fresh.goto(`${stack.rental.url}/console?lang=${lang}#/`)
      await fresh.getByTestId('key-panel').waitFor()
      const form = fresh.getByTestId('key-backup-form')
      // the form says what it needs before anything is made
      await form.locator('#key-pass').fill('short')
      await form.getByRole('button').click()
      assert.equal(await form.locator('#key-pass').getAttribute('aria-invalid'), 'true')
      assert.equal(
        await form.locator('#key-pass-problem').textContent(),
        say(lang, 'key.error.passphrase_short'),
      )
      await form.locator('#key-pass').fill('a long passphrase kept apart')
      await form.locator('#key-pass-again').fill('a long passphrase kept apart')
      await form.getByRole('button').click()
      await fresh.getByTestId('key-backup-unsaved').waitFor()
      assert.equal(
        await fresh.getByTestId('key-backed-up').count(),
        0,
        'not backed up before the file is saved',
      )
      await fresh.getByTestId('key-backup-save').click()
      await fresh.getByTestId('key-backup-cancelled').waitFor()
      assert.equal(
        await fresh.getByTestId('key-backup-cancelled').textContent(),
        say(lang, 'key.backup_cancelled'),
      )
      assert.equal(await fresh.getByTestId('key-backed-up').count(), 0)
      await fresh.screenshot({ path: `${SHOTS}names-8-key-cancelled.png`, fullPage: true })
      // offered again: saved this time
      await fresh.getByTestId('key-backup-save').click()
      await fresh.getByTestId('key-backed-up').waitFor()
      const saved = JSON.parse((await fresh.evaluate('window.__saved')) as string) as { did: string }
      assert.equal(saved.did, await fresh.locator('[data-testid=key-panel] code.did').textContent())
      // the key kept here, its backup said in Arabic words
      await fresh.goto(`${stack.rental.url}/console?lang=ar#/`)
      assert.match((await fresh.getByTestId('key-backed-up').textContent())!, ARABIC)
      await context.close()
      assert.deepEqual(errors, [])
    },
  )
})
