import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { chromiumPath, NO_CHROMIUM } from '@svc/testing/chromium'
import { axeFindings, openScreen, PHONE, say, startConsoleBrowser, WIDE } from '../support/console-browser.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()
/** Screenshots for a reviewer (ignored by git), beside the other webconsole tests'. */
const SHOTS = fileURLToPath(new URL('../.screenshots/', import.meta.url))
const INTERNALS = /body\.|\/api\//

/** WCAG's contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (rgb: string) => {
    const [r, g, bl] = rgb
      .match(/\d+(\.\d+)?/g)!
      .slice(0, 3)
      .map((c) => {
        const v = Number(c) / 255
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
      }) as [number, number, number]
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl
  }
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (hi + 0.05) / (lo + 0.05)
}

describe('the web console’s layout in Chromium: errors in words, a phone and a keyboard, the grouped navigation, axe-core', () => {
  let stack: FullStack
  let browser: Browser | undefined
  let page: Page
  let engagementId = ''
  let taskId = ''
  let errors: string[] = []

  before(async () => {
    stack = await startFullStack()
    mkdirSync(SHOTS, { recursive: true })
    const agentDid = await stack.agentOf('job_summary')
    engagementId = await stack.hireAndSign(stack.alice, 'job_summary', agentDid, stack.newClientKey())
    const task = await stack.call(stack.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'Summarise: the console shows tables as cards on a phone.',
    })
    assert.equal(task.status, 200, task.text)
    taskId = (task.body as { task: { id: string } }).task.id
    if (!executable) return
    ;({ browser, page, errors } = await startConsoleBrowser(stack, { timeoutMs: 10_000 }))
  })
  after(async () => {
    await browser?.close()
    await stack.close()
  })

  const shot = (name: string, fullPage = true) =>
    page.screenshot({ path: `${SHOTS}layout-${name}.png`, fullPage })
  const open = (route: string, lang: 'en' | 'ar' = 'en') => openScreen(page, stack, route, lang)
  // the page's own code as strings: the tests are typed without the DOM's names
  const pageText = () => page.evaluate('document.body.innerText') as Promise<string>
  const focused = (what: 'id' | 'className') =>
    page.evaluate(`document.activeElement?.${what}`) as Promise<string | undefined>
  const style = (selector: string, property: string) =>
    page.evaluate(
      `getComputedStyle(document.querySelector(${JSON.stringify(selector)})).${property}`,
    ) as Promise<string>
  /** The API's answer to the next call of `method` whose path matches, and its error code. */
  const codeOf = async (method: string, path: RegExp, act: () => Promise<unknown>) => {
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === method && path.test(new URL(r.url()).pathname)),
      act(),
    ])
    assert.ok(answer.status() >= 400, `${method} ${answer.url()} ${answer.status()}`)
    return ((await answer.json()) as { error: { code: string } }).error.code
  }

  /** The controls and cells of the main region that reach past the screen's edges. */
  const sticksOut = () =>
    page.evaluate(`[...document.querySelectorAll('main button, main a, main td, main input, main select')]
      .map((el) => ({ el: el.outerHTML.slice(0, 80), box: el.getBoundingClientRect() }))
      .filter(({ box }) => box.width > 0 && (box.left < -1 || box.right > innerWidth + 1))
      .map(({ el }) => el)`) as Promise<string[]>

  it(
    'says what went wrong in words, at the field before sending and from the error code after, in English and Arabic',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      // the form's own checks: nothing is sent, the field says what it needs
      await open('webhooks')
      const posts: string[] = []
      page.on('request', (r) => {
        if (r.method() === 'POST' && r.url().includes('/api/webhooks')) posts.push(r.url())
      })
      await page.locator('#webhook-events').fill('')
      await page.getByRole('button', { name: 'Create the webhook' }).click()
      assert.equal(await page.locator('#webhook-url').getAttribute('aria-invalid'), 'true')
      assert.equal(await page.locator('#webhook-url-problem').textContent(), say('en', 'field.https_url'))
      assert.equal(await page.locator('#webhook-events-problem').textContent(), say('en', 'field.required'))
      assert.equal(await focused('id'), 'webhook-url')
      assert.deepEqual(posts, [])

      // an API refusal: the sentence of its code, never the API's message
      await page.locator('#webhook-url').fill('https://example.com/hook')
      await page.locator('#webhook-events').fill('nonsense.event')
      const code = await codeOf('POST', /^\/api\/webhooks$/, () =>
        page.getByRole('button', { name: 'Create the webhook' }).click(),
      )
      const alert = page.getByTestId('webhook-form').getByRole('alert')
      assert.equal(await alert.textContent(), say('en', `error.code.${code}`))
      assert.doesNotMatch(await pageText(), INTERNALS)
      await shot('error-webhook-en')

      // an empty task is stopped at its field
      await open(`engagements/${encodeURIComponent(engagementId)}`)
      await page.getByRole('button', { name: say('en', 'task.run') }).click()
      assert.equal(await page.locator('#task-text-problem').textContent(), say('en', 'field.task_text'))
      assert.equal(await page.locator('#task-text').getAttribute('aria-invalid'), 'true')

      // an email that is not one, and a batch with nothing to run
      await open('members')
      await page.locator('#member-email').fill('colleague')
      await page.getByTestId('add-member').getByRole('button').click()
      assert.equal(await page.locator('#member-email-problem').textContent(), say('en', 'field.email'))
      await open('batches')
      await page.getByRole('button', { name: say('en', 'batch.run') }).click()
      assert.equal(await page.locator('#batch-items-problem').textContent(), say('en', 'field.batch_items'))
      assert.equal(
        await page.locator('#batch-engagement-problem').textContent(),
        say('en', 'field.choose_engagement'),
      )

      // a task that is not there, in English and in Arabic
      for (const lang of ['en', 'ar'] as const) {
        await page.goto(`${stack.rental.url}/console?lang=${lang}#/tasks/tsk_nope`)
        await page.locator('main [role=alert]').first().waitFor()
        assert.equal(
          (await page.locator('main [role=alert]').first().textContent())?.trim(),
          say(lang, 'error.code.task_not_found'),
        )
        assert.doesNotMatch(await pageText(), INTERNALS)
        await shot(`error-task-${lang}`)
      }

      // the webhook refusal in Arabic
      await open('webhooks', 'ar')
      await page.locator('#webhook-url').fill('https://example.com/hook')
      await page.locator('#webhook-events').fill('nonsense.event')
      const again = await codeOf('POST', /^\/api\/webhooks$/, () =>
        page.getByRole('button', { name: say('ar', 'webhook.create') }).click(),
      )
      assert.equal(
        await page.getByTestId('webhook-form').getByRole('alert').textContent(),
        say('ar', `error.code.${again}`),
      )
      assert.doesNotMatch(await pageText(), INTERNALS)
      await shot('error-webhook-ar')
    },
  )

  it(
    'on a 390×844 phone: a skip link first, a header at most 64 px with a menu (keyboard, Escape), focus at 3:1, tables as cards',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      await page.setViewportSize(PHONE)
      try {
        await onPhone()
      } finally {
        await page.setViewportSize(WIDE)
      }
    },
  )

  const onPhone = async () => {
    for (const lang of ['en', 'ar'] as const) {
      await open('tasks', lang)
      await page.getByTestId('tasks').waitFor()
      // the skip link is the first stop, and it moves the focus to the main region
      await page.keyboard.press('Tab')
      assert.equal(await focused('className'), 'skip-link')
      assert.ok(await page.locator('.skip-link').isVisible())
      await shot(`phone-skip-link-${lang}`, false)
      await page.keyboard.press('Enter')
      assert.equal(await focused('id'), 'main')
      assert.match(page.url(), /#\/tasks$/)

      const header = (await page.locator('header.top').boundingBox())!
      assert.ok(header.height <= 64, `header ${header.height} px`)

      // the menu: a button with aria-expanded, opened from the keyboard, closed by Escape
      const menu = page.locator('.menu-button')
      assert.equal(await menu.getAttribute('aria-expanded'), 'false')
      assert.equal(await page.locator('#sidebar').isVisible(), false)
      await menu.focus()
      const ring = {
        outline: await style('.menu-button', 'outlineColor'),
        width: await style('.menu-button', 'outlineWidth'),
        style: await style('.menu-button', 'outlineStyle'),
      }
      assert.equal(ring.style, 'solid')
      assert.ok(parseFloat(ring.width) >= 2, ring.width)
      for (const background of ['rgb(255, 255, 255)', 'rgb(250, 250, 250)'])
        assert.ok(contrast(ring.outline, background) >= 3, `${ring.outline} on ${background}`)
      await page.keyboard.press('Enter')
      assert.equal(await menu.getAttribute('aria-expanded'), 'true')
      assert.ok(await page.locator('#sidebar').isVisible())
      await shot(`phone-menu-${lang}`)
      await page.locator('#sidebar').evaluate((nav) => nav.scrollTo(0, nav.scrollHeight))
      await shot(`phone-menu-end-${lang}`, false)
      await page.keyboard.press('Escape')
      assert.equal(await menu.getAttribute('aria-expanded'), 'false')
      assert.equal(await focused('className'), 'menu-button')
      await menu.click()
      await page
        .locator('#sidebar')
        .getByRole('link', { name: say(lang, 'nav.budgets') })
        .click()
      await page.waitForURL(/#\/budgets$/)
      assert.equal(await menu.getAttribute('aria-expanded'), 'false')

      // the list's rows are cards: nothing sticks out of the 390 px screen, in either direction
      await open('tasks', lang)
      await page.getByTestId('tasks').locator('tbody tr').first().waitFor()
      assert.equal(await style('[data-testid=tasks] tbody tr', 'display'), 'block')
      assert.deepEqual(await sticksOut(), [])
      assert.equal(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'), true)
      await shot(`phone-tasks-${lang}`)
      await open('members', lang)
      await page.getByTestId('members').waitFor()
      assert.deepEqual(await sticksOut(), [])
      await shot(`phone-members-${lang}`)
      await shot(`phone-members-top-${lang}`, false)
      await open(`engagements/${encodeURIComponent(engagementId)}`, lang)
      // hired with another key than this browser's: the sentence says so in words, the two keys
      // follow short with their copy buttons, and nothing of it runs off the screen
      const otherKey = page.getByTestId('other-key').first()
      await otherKey.waitFor()
      assert.doesNotMatch((await otherKey.locator('p').textContent()) ?? '', /did:key:/)
      // the engagement's key with its copy button; this browser's too, or that it holds none
      assert.ok((await otherKey.locator('button.copy').count()) >= 1)
      assert.equal(
        await otherKey.evaluate(
          (el) =>
            el.scrollWidth <= el.clientWidth + 1 &&
            el.getBoundingClientRect().right <= el.ownerDocument.documentElement.clientWidth + 1,
        ),
        true,
        'the key warning fits the phone’s screen',
      )
      assert.deepEqual(await sticksOut(), [])
      await shot(`phone-engagement-${lang}`)
      await shot(`phone-engagement-top-${lang}`, false)
    }
  }

  it(
    'groups the navigation (Work, Money, Trust, Organization) in a sidebar, marks the current screen, and keeps deep links',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      for (const lang of ['en', 'ar'] as const) {
        await open(`tasks/${encodeURIComponent(taskId)}`, lang)
        const sidebar = page.locator('#sidebar')
        assert.ok(await sidebar.isVisible())
        assert.equal(await page.locator('.menu-button').isVisible(), false)
        assert.deepEqual(
          await sidebar.locator('.nav-heading').allTextContents(),
          ['work', 'money', 'trust', 'org'].map((group) => say(lang, `nav.group.${group}`)),
        )
        assert.equal(await sidebar.locator('[aria-current=page]').textContent(), say(lang, 'nav.tasks'))
        await shot(`wide-task-${lang}`)
        await open(`engagements/${encodeURIComponent(engagementId)}`, lang)
        assert.equal(await sidebar.locator('[aria-current=page]').textContent(), say(lang, 'nav.engagements'))
        await open('members', lang)
        assert.equal(await sidebar.locator('[aria-current=page]').textContent(), say(lang, 'tenant.members'))
        await shot(`wide-members-${lang}`)
      }
    },
  )

  it(
    'axe-core finds no serious or critical violation on the screens, in English and Arabic, wide and on a phone',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const screens = [
        'home',
        'market',
        'engagements',
        `engagements/${encodeURIComponent(engagementId)}`,
        'tasks',
        `tasks/${encodeURIComponent(taskId)}`,
        'batches',
        'schedules',
        'approvals',
        'statements',
        'invoices',
        'budgets',
        'refunds',
        'disputes',
        'usage',
        'incidents',
        'teams',
        'executions',
        'org',
        'members',
        'webhooks',
        'automation',
        'connections',
        'profile',
        'danger',
      ]
      const found: string[] = []
      for (const viewport of [WIDE, PHONE]) {
        await page.setViewportSize(viewport)
        for (const lang of ['en', 'ar'] as const)
          for (const screen of screens) {
            await open(screen, lang)
            for (const v of await axeFindings(page)) found.push(`${viewport.width} ${lang} #/${screen}: ${v}`)
          }
      }
      await page.setViewportSize(WIDE)
      assert.deepEqual(found, [])
      assert.deepEqual(errors, [])
    },
  )
})
