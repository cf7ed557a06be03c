import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { chromiumPath, NO_CHROMIUM } from '@svc/testing/chromium'
import { axeFindings, openScreen, PHONE, say, startConsoleBrowser, WIDE } from '../support/console-browser.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()
const INTERNALS = /body\.|\/api\/|\/v1\//

describe(
  'the console’s controls in Chromium: members and roles, the wallet, batches, the market’s search, onboarding, one place for webhooks and schedules',
  { skip: executable ? false : NO_CHROMIUM },
  () => {
    let stack: FullStack
    let browser: Browser
    let page: Page
    let engagementId = ''
    const shots = mkdtempSync(join(tmpdir(), 'console-controls-'))
    let errors: string[] = []

    before(async () => {
      stack = await startFullStack()
      console.log(`console controls screenshots: ${shots}`)
      const agentDid = await stack.agentOf('job_summary')
      engagementId = await stack.hireAndSign(stack.alice, 'job_summary', agentDid, stack.newClientKey())
      for (const email of ['colleague@controls.example', 'leaving@controls.example']) {
        const invited = await stack.call(stack.alice, 'POST', '/v1/users', { email, role: 'member' })
        assert.equal(invited.status, 201, invited.text)
      }
      ;({ browser, page, errors } = await startConsoleBrowser(stack, { timeoutMs: 10_000 }))
    })
    after(async () => {
      await browser?.close()
      await stack.close()
    })

    const open = (route: string, lang: 'en' | 'ar' = 'en') => openScreen(page, stack, route, lang)
    const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })
    const pageText = () => page.evaluate('document.querySelector("main").innerText') as Promise<string>
    const toast = () => page.getByTestId('toasts').locator('.toast').last()
    const members = async () =>
      (await stack.call(stack.alice, 'GET', '/v1/users?limit=100')).body.members as Array<{
        id: string
        email: string | null
        role: string
      }>

    it('changes a member’s role (asked, said, undone) and removes a member (asked, said)', async () => {
      await open('members')
      const row = page.locator('[data-member="colleague@controls.example"]')
      await row.locator('select').selectOption('billing')
      await row.getByRole('button', { name: say('en', 'member.change_role') }).click()
      // asked first: nothing changed yet
      await row
        .getByText(say('en', 'member.confirm_role', { who: 'colleague@controls.example', role: 'billing' }))
        .waitFor()
      assert.equal((await members()).find((m) => m.email === 'colleague@controls.example')?.role, 'member')
      await row.getByRole('button', { name: say('en', 'member.yes_role') }).click()
      await toast()
        .filter({
          hasText: say('en', 'member.role_changed', { who: 'colleague@controls.example', role: 'billing' }),
        })
        .waitFor()
      assert.equal(await page.getByTestId('toasts').getAttribute('role'), 'status')
      assert.equal((await members()).find((m) => m.email === 'colleague@controls.example')?.role, 'billing')
      await shot('members-role-changed')
      // the inverse: the role it had
      await toast()
        .getByRole('button', { name: say('en', 'toast.undo') })
        .click()
      await toast()
        .filter({ hasText: say('en', 'toast.undone') })
        .waitFor()
      assert.equal((await members()).find((m) => m.email === 'colleague@controls.example')?.role, 'member')

      const leaving = page.locator('[data-member="leaving@controls.example"]')
      await leaving
        .getByRole('button', { name: say('en', 'member.remove_who', { who: 'leaving@controls.example' }) })
        .click()
      await leaving.getByRole('button', { name: say('en', 'member.yes_remove') }).click()
      await toast()
        .filter({ hasText: say('en', 'member.invite_removed', { who: 'leaving@controls.example' }) })
        .waitFor()
      await leaving.waitFor({ state: 'detached' })
      assert.equal(
        (await members()).some((m) => m.email === 'leaving@controls.example'),
        false,
      )
      assert.doesNotMatch(await pageText(), INTERNALS)
    })

    it('shows roles as groups in words and builds a custom role by ticking groups', async () => {
      await open('members')
      const admin = page.locator('[data-testid=roles] [data-role=admin]')
      await admin.getByText(say('en', 'perm.hire')).waitFor()
      await admin.getByText(say('en', 'perm.hire.about')).waitFor()
      // the scopes are behind a disclosure, not the card's words
      assert.equal(await admin.locator('code').first().isVisible(), false)
      const form = page.getByTestId('role-form')
      await form.getByRole('button', { name: say('en', 'roles.save') }).click()
      await page.locator('#role-name-problem').waitFor()
      await page.fill('#role-name', 'auditor')
      await form.getByLabel(say('en', 'perm.trust'), { exact: false }).first().check()
      await form.getByRole('button', { name: say('en', 'roles.save') }).click()
      await toast()
        .filter({ hasText: say('en', 'perm.role_made', { name: 'auditor' }) })
        .waitFor()
      const roles = (await stack.call(stack.alice, 'GET', '/v1/roles')).body.roles as Array<{
        name: string
        permissions: string[]
      }>
      assert.deepEqual(roles.find((r) => r.name === 'auditor')?.permissions.sort(), [
        'agents:revoke',
        'audit:read',
        'incidents:read',
        'incidents:write',
        'record:read',
      ])
      await page
        .locator('[data-testid=roles] [data-role=auditor]')
        .getByText(say('en', 'perm.trust'))
        .waitFor()
      await shot('members-roles-en')
      await open('members', 'ar')
      await page.locator('[data-testid=roles] [data-role=admin]').getByText(say('ar', 'perm.hire')).waitFor()
      await shot('members-roles-ar')
    })

    it('adds demo money to the wallet: the balance, what is held, the statement line, labelled demo money', async () => {
      await open('wallet')
      const balance = page.getByTestId('wallet-balance')
      await balance.waitFor()
      const before = (await stack.call(stack.alice, 'GET', '/api/wallet')).body.balance as {
        amount_fils: number
      }
      await page.getByTestId('add-funds').getByText(say('en', 'wallet.demo_badge'), { exact: true }).waitFor()
      // the form says what it needs before sending
      await page.fill('#top-up-amount', '99999')
      await page.getByRole('button', { name: say('en', 'wallet.add_demo') }).click()
      await page.locator('#top-up-amount-problem').waitFor()
      await page.fill('#top-up-amount', '250.50')
      await page.getByRole('button', { name: say('en', 'wallet.add_demo') }).click()
      await toast()
        .filter({ hasText: /AED\s250\.50/ })
        .waitFor()
      const after = (await stack.call(stack.alice, 'GET', '/api/wallet')).body.balance as {
        amount_fils: number
      }
      assert.equal(after.amount_fils, before.amount_fils + 25_050)
      await page.getByTestId('wallet-lines').getByText(say('en', 'statement.kind.funding')).first().waitFor()
      await page.getByTestId('wallet-held').waitFor()
      assert.doesNotMatch(await pageText(), INTERNALS)
      await shot('wallet-en')
      await open('wallet', 'ar')
      await page.getByTestId('add-funds').getByText(say('ar', 'wallet.demo_badge'), { exact: true }).waitFor()
      await shot('wallet-ar')
    })

    it('runs a batch after saying what it costs, opens it: progress, its tasks linked, CSV and JSONL', async () => {
      await open('batches')
      await page.selectOption('#batch-engagement', engagementId)
      await page.fill('#batch-items', 'First short text to summarize.\nSecond short text to summarize.')
      const preview = page.getByTestId('cost-preview')
      await preview.waitFor()
      assert.match((await preview.textContent())!, /2 tasks × AED\s[\d.,]+ = AED\s[\d.,]+/)
      await shot('batch-preview')
      await page.getByRole('button', { name: say('en', 'batch.run') }).click()
      const link = page.locator('[data-testid=batches] tr[data-batch] a').first()
      await link.click()
      await page.locator('[data-testid=batch][data-state=completed]').waitFor({ timeout: 30_000 })
      const items = page.getByTestId('batch-items')
      // each item named by its text's first words, linking to its task
      await items.getByTestId('item-task').filter({ hasText: 'First short text to summarize.' }).waitFor()
      assert.equal(await items.locator('tr[data-item]').count(), 2)
      const csv = (await page.evaluate(
        `fetch(document.querySelector('[data-testid=download-csv]').href).then((r) => r.text())`,
      )) as string
      assert.match(csv.split('\n')[0]!, /^index,state,task_id/)
      assert.equal(csv.trim().split('\n').length, 3)
      const jsonl = (await page.evaluate(
        `fetch(document.querySelector('[data-testid=download-jsonl]').href).then((r) => r.text())`,
      )) as string
      assert.equal(jsonl.trim().split('\n').length, 2)
      await shot('batch-detail-en')
      await items.locator('a').first().click()
      await page.waitForURL(/#\/tasks\/tsk_/)
      await open('batches', 'ar')
      await page.locator('[data-testid=batches] tr[data-batch] a').first().click()
      await page.getByTestId('batch-items').waitFor()
      await shot('batch-detail-ar')
    })

    it('filters jobs and listings with one search above them', async () => {
      await open('market')
      const search = page.getByTestId('listing-search')
      const jobs = page.getByTestId('jobs')
      await jobs.waitFor()
      const all = await jobs.locator('li.job').count()
      assert.ok(all > 1, `${all} jobs`)
      const searchTop = (await search.boundingBox())!.y
      assert.ok(searchTop < (await jobs.boundingBox())!.y, 'the search sits above the jobs')
      await page.fill('#ls-q', 'nothing-matches-this-zzz')
      await search.getByRole('button', { name: say('en', 'search.button') }).click()
      await page.getByText(say('en', 'mkt.no_jobs_match')).waitFor()
      await search.getByRole('button', { name: say('en', 'mkt.clear') }).click()
      await jobs
        .locator('li.job')
        .nth(all - 1)
        .waitFor()
      const firstTitle = (await jobs.locator('li.job h3').first().textContent())!
      await page.fill('#ls-q', firstTitle)
      await search.getByRole('button', { name: say('en', 'search.button') }).click()
      await page.getByText(say('en', 'mkt.jobs_found', { n: '1' })).waitFor()
      assert.ok((await jobs.locator('li.job').count()) < all)
      await shot('market-search')
    })

    it('links each onboarding step to do to the part of the screen that completes it', async () => {
      await open('home')
      const todo = page.getByTestId('home-todo')
      await todo.waitFor()
      await todo.getByRole('link', { name: say('en', 'onb.todo.business_check_submitted') }).click()
      await page.waitForURL(/#\/onboarding\/business$/)
      await page.getByTestId('business-form').waitFor()
      // focus moves in an effect after the screen is drawn: wait for it, then check where it is
      await page
        .waitForFunction("document.activeElement?.id === 'onb-business'", null, { timeout: 5_000 })
        .catch(() => undefined)
      assert.equal(await page.evaluate('document.activeElement?.id'), 'onb-business')
      await open('home')
      await todo.getByRole('link', { name: say('en', 'onb.todo.agent_screened') }).click()
      await page.waitForURL(/#\/onboarding\/screening$/)
      await page.selectOption('#onb-agent', { index: 1 })
      await page.getByRole('button', { name: say('en', 'onb.screen') }).click()
      await toast().waitFor()
      await shot('onboarding-en')
      assert.doesNotMatch(await pageText(), INTERNALS)
    })

    it('keeps one place for webhooks and one for schedules; the old deep link goes on to webhooks', async () => {
      await page.goto(`${stack.rental.url}/console#/automation`)
      await page.waitForURL(/#\/webhooks$/)
      await page.locator('main h1', { hasText: say('en', 'nav.webhooks') }).waitFor()
      const sidebar = page.locator('#sidebar')
      assert.equal(await sidebar.locator('a[href="#/automation"]').count(), 0)
      assert.equal(await sidebar.locator('a[href="#/webhooks"]').count(), 1)
      assert.equal(await sidebar.locator('a[href="#/schedules"]').count(), 1)
      // the empty state's next step is on the page: it takes the focus to the form
      await page.locator('main .empty a').click()
      // focus moves in an effect after the screen is drawn: wait for it, then check where it is
      await page
        .waitForFunction("document.activeElement?.id === 'webhook-url'", null, { timeout: 5_000 })
        .catch(() => undefined)
      assert.equal(await page.evaluate('document.activeElement?.id'), 'webhook-url')
      await open('schedules')
      assert.doesNotMatch(await pageText(), /above|أعلاه/)
    })

    it('fits a phone, and axe-core finds no serious or critical violation on these screens', async () => {
      const screens = ['wallet', 'members', 'batches', 'market', 'onboarding', 'webhooks', 'schedules']
      const found: string[] = []
      for (const [viewport, langs] of [
        [WIDE, ['en', 'ar']],
        [PHONE, ['ar']],
      ] as const) {
        await page.setViewportSize(viewport)
        for (const lang of langs)
          for (const screen of screens) {
            await open(screen, lang)
            for (const v of await axeFindings(page)) found.push(`${viewport.width} ${lang} #/${screen}: ${v}`)
            if (viewport === PHONE) {
              const out =
                (await page.evaluate(`[...document.querySelectorAll('main button, main a, main input, main select')]
                .filter((el) => { const b = el.getBoundingClientRect(); return b.width > 0 && (b.left < -1 || b.right > innerWidth + 1) })
                .map((el) => el.outerHTML.slice(0, 80))`)) as string[]
              assert.deepEqual(out, [], `${screen} on a phone`)
              if (screen === 'wallet' || screen === 'members') await shot(`phone-${screen}-${lang}`)
            }
          }
      }
      assert.deepEqual(found, [])
      assert.deepEqual(errors, [])
    })
  },
)
