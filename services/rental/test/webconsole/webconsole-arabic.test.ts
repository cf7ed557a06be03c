import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { chromiumPath, NO_CHROMIUM } from '@svc/testing/chromium'
import { seriousAxeViolations } from '@svc/testing/axe'
import {
  axeFindings,
  openScreen,
  PHONE,
  say,
  signInToConsole,
  startConsoleBrowser,
  WIDE,
} from '../support/console-browser.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()
/** Screenshots for a reviewer (ignored by git), beside the other webconsole tests'. */
const SHOTS = fileURLToPath(new URL('../.screenshots/', import.meta.url))
/** More tasks than a page shows (paging.js PAGE_SIZE 20). */
const TASKS = 22
const MIRRORED = 'matrix(-1, 0, 0, 1, 0, 0)'

describe('the web console in Arabic: the catalogue’s words, text in its own direction, mirrored arrows, paging, deep links', () => {
  let stack: FullStack
  let browser: Browser | undefined
  let page: Page
  let engagementId = ''
  let taskIds: string[] = []
  let errors: string[] = []

  before(async () => {
    stack = await startFullStack()
    mkdirSync(SHOTS, { recursive: true })
    const agentDid = await stack.agentOf('job_summary')
    engagementId = await stack.hireAndSign(stack.alice, 'job_summary', agentDid, stack.newClientKey())
    for (let i = 1; i <= TASKS; i++) {
      const task = await stack.call(stack.alice, 'POST', '/api/tasks', {
        engagement_id: engagementId,
        text: `Summarise report number ${i}. It is written in English, and its full stop stays at its end.`,
      })
      assert.equal(task.status, 200, task.text)
      taskIds.push((task.body as { task: { id: string } }).task.id)
    }
    taskIds = taskIds.reverse() // the list shows the newest first
    if (!executable) return
    ;({ browser, page, errors } = await startConsoleBrowser(stack))
  })
  after(async () => {
    await browser?.close()
    await stack.close()
  })

  const shot = (name: string) => page.screenshot({ path: `${SHOTS}arabic-${name}.png`, fullPage: true })
  const open = (route: string, lang: 'en' | 'ar' = 'ar') => openScreen(page, stack, route, lang)
  const evaluate = <T>(code: string) => page.evaluate(code) as Promise<T>
  // the page's own code as strings: the tests are typed without the DOM's names
  const transformOf = (selector: string) =>
    evaluate<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).transform`)

  it(
    'shows the market’s job titles and agent names in Arabic, and English ones in English',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      await open('market')
      const main = page.locator('main')
      await main.getByRole('heading', { name: 'ملخص مستند' }).waitFor()
      assert.ok(await main.getByRole('button', { name: /الملخِّص/ }).count(), 'the agent’s Arabic name')
      assert.equal(await main.getByText('Document summary').count(), 0)
      assert.equal(await evaluate<string>('document.documentElement.dir'), 'rtl')
      await shot('market')
      assert.deepEqual(await axeFindings(page), [])

      // the member's language follows the console's: back in English, the API answers English
      await open('market', 'en')
      await main.getByRole('heading', { name: 'Document summary' }).waitFor()
      assert.ok(await main.getByRole('button', { name: /Summariser/ }).count())
    },
  )

  it(
    'lays out a task’s English text left to right inside the Arabic page, and mirrors the back arrow',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      await open(`tasks/${encodeURIComponent(taskIds[0]!)}`)
      const output = page.getByTestId('output')
      await output.waitFor({ timeout: 30_000 }).catch(async () => {
        // the task may still be running: its page updates from the events stream
        await page.reload()
        await output.waitFor({ timeout: 30_000 })
      })
      assert.equal(await output.getAttribute('dir'), 'auto')
      assert.equal(
        await evaluate<string>(`getComputedStyle(document.querySelector('[data-testid=output]')).direction`),
        'ltr',
      )
      // the back arrow points the way an Arabic page reads: to the right
      assert.equal(await transformOf('main .back-arrow'), MIRRORED)
      await shot('task')
      // in English it is not mirrored
      await open(`tasks/${encodeURIComponent(taskIds[0]!)}`, 'en')
      assert.equal(await transformOf('main .back-arrow'), 'none')
    },
  )

  it(
    'pages the tasks: the first page, the next, and back, with the rows shown said in Arabic',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      await open('tasks')
      const pager = page.getByTestId('pager')
      await pager.waitFor()
      const rows = page.locator('[data-testid=tasks] tbody tr')
      assert.equal(await rows.count(), 20)
      const range = pager.locator('.pager-range')
      assert.match((await range.textContent())!, /^الصفوف/)
      const previous = pager.getByRole('button', { name: say('ar', 'list.previous') })
      const next = pager.getByRole('button', { name: say('ar', 'list.next') })
      assert.equal(await previous.isDisabled(), true)
      // the arrows mirrored in Arabic
      assert.equal(await transformOf('[data-testid=pager] .forward-arrow'), MIRRORED)
      assert.ok((await page.locator('[data-testid=tasks]').innerHTML()).includes(taskIds[0]!))
      await next.click()
      await page.waitForFunction(
        `document.querySelectorAll('[data-testid=tasks] tbody tr').length === ${TASKS - 20}`,
      )
      const second = await page.locator('[data-testid=tasks]').innerHTML()
      assert.ok(second.includes(taskIds[TASKS - 1]!), 'the oldest task on the second page')
      assert.ok(!second.includes(taskIds[0]!), 'the newest is not')
      assert.equal(await next.isDisabled(), true)
      await shot('tasks-page-2')
      assert.deepEqual(await axeFindings(page), [])
      await previous.click()
      await page.waitForFunction(`document.querySelectorAll('[data-testid=tasks] tbody tr').length === 20`)

      // on a phone the pager stays within the screen
      await page.setViewportSize(PHONE)
      await open('tasks')
      await pager.waitFor()
      const box = (await pager.boundingBox())!
      assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width + 1, JSON.stringify(box))
      await shot('tasks-phone')
      await page.setViewportSize(WIDE)
    },
  )

  it(
    'filters a list by what its route offers: the executions by kind and state',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      await open('executions')
      await page.getByTestId('executions').waitFor()
      const asked = page.waitForRequest(
        (r) => r.url().includes('/v1/executions') && r.url().includes('kind=task'),
      )
      await page.locator('#exec-kind').selectOption('task')
      assert.match((await asked).url(), /kind=task/)
      const completed = page.waitForRequest((r) => /kind=task&state=completed/.test(r.url()))
      await page.locator('#exec-state').selectOption('completed')
      await completed
      await page.getByTestId('executions').waitFor()
      await shot('executions-filtered')
      assert.deepEqual(await axeFindings(page), [])

      await open('incidents')
      const open_ = page.waitForRequest(
        (r) => r.url().includes('/api/incidents') && r.url().includes('state=open'),
      )
      await page.locator('#incident-state').selectOption('open')
      await open_
    },
  )

  it(
    'opens a task and an engagement from their deep links, as bookmarked or mailed, and after a reload',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      for (const [route, id] of [
        ['tasks', taskIds[3]!],
        ['engagements', engagementId],
      ] as const) {
        await page.goto(`${stack.rental.url}/console#/${route}/${id}`)
        await page.locator('main h1').first().waitFor()
        assert.ok((await page.locator('main').innerText()).length > 0)
        assert.ok(
          await page
            .locator(`main a[href="#/${route}"], main a[href="#/engagements/${engagementId}"]`)
            .count(),
          `${route}: the page links back to its list`,
        )
        assert.doesNotMatch(await page.locator('main').innerText(), new RegExp(say('en', 'not_found')))
        await page.reload()
        await page.locator('main h1').first().waitFor()
        assert.equal(await evaluate<string>('location.hash'), `#/${route}/${id}`)
      }
      // the task's own page: its id in small print and its state
      await page.goto(`${stack.rental.url}/console#/tasks/${taskIds[3]!}`)
      await page.getByTestId('task-state').waitFor()
      // an id that is not there says so under a heading
      await page.goto(`${stack.rental.url}/console#/tasks/tsk_nope`)
      await page.locator('main h1').first().waitFor()
      assert.ok(await page.locator('main [role=alert]').count())
      assert.deepEqual(errors, [])
    },
  )

  it(
    'a deep link opened signed out comes back to its screen after the sign-in, the idp’s form or its session',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const context = await browser!.newContext({ viewport: WIDE })
      const fresh = await context.newPage()
      // a mailed link opened signed out everywhere: the idp's sign-in form, then the task itself
      await signInToConsole(fresh, stack, `tasks/${taskIds[4]!}`, 'ar')
      await fresh.getByTestId('task-state').waitFor()
      assert.equal(new URL(fresh.url()).hash, `#/tasks/${taskIds[4]!}`)
      assert.equal(await fresh.getAttribute('html', 'dir'), 'rtl')
      // the console's session ends (expired, or signed out elsewhere); the idp's goes on
      await context.clearCookies({ name: 'rental_session' })
      // a link opened in a new tab: the sign-in goes to the idp and back, the fragment kept
      await fresh.goto('about:blank')
      await fresh.goto(`${stack.rental.url}/console#/tasks/${taskIds[5]!}`)
      await fresh.getByTestId('task-state').waitFor()
      assert.equal(new URL(fresh.url()).hash, `#/tasks/${taskIds[5]!}`)
      // a link followed in the open console: it says the session ended and signs in again, back here
      await context.clearCookies({ name: 'rental_session' })
      await fresh.goto(`${stack.rental.url}/console#/engagements/${engagementId}`)
      const again = fresh.getByTestId('signed-out')
      await again.waitFor()
      await fresh.screenshot({ path: `${SHOTS}arabic-signed-out.png`, fullPage: true })
      await again.getByRole('button').click()
      await fresh.getByTestId('engagement-state').waitFor()
      assert.equal(new URL(fresh.url()).hash, `#/engagements/${engagementId}`)
      await context.close()
    },
  )

  it('a signed-out browser gets a page that keeps the screen and goes to sign in; another client the 302', async () => {
    const browserLike = await fetch(`${stack.rental.url}/console?lang=ar`, {
      headers: { accept: 'text/html,application/xhtml+xml' },
      redirect: 'manual',
    })
    assert.equal(browserLike.status, 200)
    assert.match(browserLike.headers.get('content-security-policy') ?? '', /script-src 'self'/)
    const page = await browserLike.text()
    assert.match(page, /data-sign-in="\/auth\/login\?ui_locales=ar"/)
    assert.match(page, /<script src="\/console\/assets\/sign-in.js"><\/script>/)
    assert.match(page, /<a class="svc-button primary" href="\/auth\/login\?ui_locales=ar" data-sign-in-link>/)
    assert.match(page, /<link rel="stylesheet" href="\/console\/design\.css\?v=/)
    assert.match(page, /<h1>سجّل الدخول إلى لوحة التحكم<\/h1>/)
    assert.doesNotMatch(page, /http-equiv/i, 'no meta refresh (axe: meta-refresh)')
    const client = await fetch(`${stack.rental.url}/console`, { redirect: 'manual' })
    assert.equal(client.status, 302)
    assert.equal(client.headers.get('location'), '/auth/login')
  })

  it(
    'the signed-out page: the shared design, the person’s language, a visible Sign in link; axe finds nothing serious, wide and at 390 px',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const context = await browser!.newContext({ bypassCSP: true })
      const signedOut = await context.newPage()
      // sign-in.js leaves at once: held back here, the page is looked at as a person sees it meanwhile
      await signedOut.route('**/console/assets/sign-in.js', (route) =>
        route.fulfill({ contentType: 'text/javascript', body: '' }),
      )
      const found: string[] = []
      for (const viewport of [WIDE, PHONE])
        for (const lang of ['en', 'ar'] as const) {
          await signedOut.setViewportSize(viewport)
          await signedOut.goto(`${stack.rental.url}/console?lang=${lang}`)
          const link = signedOut.getByRole('link', { name: lang === 'ar' ? 'تسجيل الدخول' : 'Sign in' })
          assert.equal(await link.getAttribute('href'), `/auth/login?ui_locales=${lang}`)
          assert.ok(await link.isVisible(), `${lang}: the link is visible`)
          const look = (await signedOut.evaluate(`({
            dir: document.documentElement.dir,
            accent: getComputedStyle(document.documentElement).getPropertyValue('--svc-accent').trim(),
            card: Boolean(document.querySelector('main.svc-main .svc-card h1')),
            overflow: document.documentElement.scrollWidth - window.innerWidth,
          })`)) as { dir: string; accent: string; card: boolean; overflow: number }
          assert.equal(look.dir, lang === 'ar' ? 'rtl' : 'ltr')
          assert.equal(look.accent, '#0b57d0', 'the shared design sheet applies')
          assert.ok(look.card, 'a card with a heading')
          assert.ok(look.overflow <= 0, `${viewport.width} ${lang}: nothing wider than the window`)
          await signedOut.screenshot({
            path: `${SHOTS}signed-out-${viewport.width}-${lang}.png`,
            fullPage: true,
          })
          found.push(...(await seriousAxeViolations(signedOut)).map((v) => `${viewport.width} ${lang}: ${v}`))
        }
      assert.deepEqual(found, [])
      // with its script (another tab: the same address with a fragment would not load again), on to the idp's sign-in
      const next = await context.newPage()
      await next.goto(`${stack.rental.url}/console?lang=ar#/tasks/${taskIds[0]!}`)
      await next.waitForURL(/\/ui\/login/)
      assert.equal(await next.getAttribute('html', 'dir'), 'rtl')
      // the idp's sign-in leads back to the console that sent the person (its client_uri)
      const back = next.locator('[data-onward-app]')
      assert.equal(await back.getAttribute('href'), `${stack.rental.url}/console`)
      assert.equal((await back.textContent())?.trim(), 'العودة إلى Rental console')
      await context.close()
    },
  )
})
