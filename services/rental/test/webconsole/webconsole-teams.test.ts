import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { chromiumPath, NO_CHROMIUM } from '@svc/testing/chromium'
import {
  ARABIC,
  axeFindings,
  type Lang,
  openScreen,
  PHONE,
  say,
  startConsoleBrowser,
  WIDE,
} from '../support/console-browser.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()
/** Screenshots for a reviewer (ignored by git), beside the other webconsole tests'. */
const SHOTS = fileURLToPath(new URL('../.screenshots/', import.meta.url))
/** What a person must not meet as a label: ids and DIDs (small print with its copy button aside). */
const INTERNAL_LABEL = /did:key|tsk_|eng_|team_|hop_/
/** The marks the console's words carry for bidi (isolates, ALM, LRM/RLM): not what a person reads. */
const BIDI_MARKS = /[\u061C\u200E\u200F\u2066-\u2069]/g
const plain = (text: string | null) => (text ?? '').replace(BIDI_MARKS, '').trim()
/** Intl's percent for 30 % and 20 % in the console's locales (en-AE; ar-AE with Arabic-Indic digits). */
const PERCENT = { en: { 3000: '30%', 2000: '20%' }, ar: { 3000: '٣٠٪', 2000: '٢٠٪' } } as const
const TEXT =
  'The supplier confirmed the order on 12/03/2025. Please pay AED 12,500.00 to ops@example.com. ' +
  'Delivery follows within two weeks.'

describe(
  'the console’s team screen in Chromium: the lead, members and each hop of a task’s chain by agent name, in English and Arabic',
  { skip: executable ? false : NO_CHROMIUM },
  () => {
    let stack: FullStack
    let browser: Browser
    let context: BrowserContext
    let page: Page
    let errors: string[] = []
    let teamId = ''
    let taskId = ''
    const dids = { lead: '', summariser: '', extractor: '' }

    before(async () => {
      stack = await startFullStack({ RENTAL_TASK_TIMEOUT_MS: '25000' })
      mkdirSync(SHOTS, { recursive: true })
      dids.lead = await stack.agentOf('job_team_brief')
      dids.summariser = await stack.agentOf('job_summary')
      dids.extractor = await stack.agentOf('job_extraction')
      const made = await stack.call(stack.alice, 'POST', '/api/teams', {
        name: 'Brief team',
        lead_did: dids.lead,
        job_id: 'job_team_brief',
        max_depth: 1,
        task_budget_fils: 1000,
        members: [
          { agent_did: dids.summariser, share_bps: 3000, hop_fils: 100 },
          { agent_did: dids.extractor, share_bps: 2000, hop_fils: 100 },
        ],
      })
      assert.equal(made.status, 201, made.text)
      teamId = (made.body as { id: string }).id
      await stack.hireTeamAndSign(stack.alice, teamId, stack.newClientKey())
      const ran = await stack.call(stack.alice, 'POST', `/api/teams/${teamId}/tasks`, { text: TEXT })
      assert.equal((ran.body.task as { state: string }).state, 'completed', ran.text)
      taskId = (ran.body.task as { id: string }).id
      ;({ browser, context, page, errors } = await startConsoleBrowser(stack))
    })
    after(async () => {
      await browser?.close()
      await stack.close()
    })

    /** The catalogue's name of each agent of the team, in `lang`. */
    const namesIn = async (lang: Lang) => {
      const jobs = (await stack.call(stack.alice, 'GET', `/api/jobs?lang=${lang}`)).body.jobs as Array<{
        agents: Array<{ did: string; name: string }>
      }>
      const byDid = new Map(jobs.flatMap((job) => job.agents.map((a) => [a.did, a.name] as const)))
      return {
        lead: byDid.get(dids.lead)!,
        summariser: byDid.get(dids.summariser)!,
        extractor: byDid.get(dids.extractor)!,
      }
    }
    /** The words of the main region, without the small print of ids (copy buttons). */
    const readable = () =>
      page.evaluate(`(() => {
        const small = [...document.querySelectorAll('main .id-line')]
        small.forEach((el) => (el.style.display = 'none'))
        const text = document.querySelector('main').innerText
        small.forEach((el) => (el.style.display = ''))
        return text
      })()`) as Promise<string>

    for (const lang of ['en', 'ar'] as const)
      it(`names the lead, the members and every hop of a team task by agent name (${lang})`, async () => {
        const names = await namesIn(lang)
        for (const name of Object.values(names)) assert.ok(name, 'the catalogue names each agent')
        if (lang === 'ar') for (const name of Object.values(names)) assert.match(name, ARABIC)

        await openScreen(page, stack, `teams/${teamId}`, lang)
        assert.equal((await page.locator('main h1').textContent())?.trim(), 'Brief team')
        assert.equal(await page.getAttribute('html', 'dir'), lang === 'ar' ? 'rtl' : 'ltr')
        const lead = page
          .locator('main dd')
          .filter({ has: page.locator('.agent-name') })
          .first()
        await lead.locator('.agent-name').waitFor()
        assert.equal(((await lead.locator('.agent-name').textContent()) ?? '').trim(), names.lead)
        const members = page.locator('main section.card').first().locator('ul > li .agent-name')
        assert.deepEqual(
          (await members.allTextContents()).map((n) => n.trim()).sort(),
          [names.extractor, names.summariser].sort(),
        )

        // the task's chain: the lead's hop and one hop for each member, each by name and in words
        await page.locator('main details summary').first().click()
        const open = page.locator('main details a')
        assert.equal((await open.textContent())?.trim(), say(lang, 'teams.open_task'))
        assert.match((await open.getAttribute('href'))!, /^#\/tasks\/tsk_/)
        const hops = page.locator('main [data-hop]')
        await hops.nth(2).waitFor()
        assert.equal(await hops.count(), 3)
        const root = page.locator('main ul.tree > li[data-hop]').first()
        assert.equal(
          ((await root.locator(':scope > .hop .agent-name').textContent()) ?? '').trim(),
          names.lead,
        )
        const children = root.locator(':scope > ul.tree > li[data-hop] > .hop .agent-name')
        assert.deepEqual(
          (await children.allTextContents()).map((n) => n.trim()).sort(),
          [names.extractor, names.summariser].sort(),
        )
        assert.equal(await page.locator('main .hop .state-completed').count(), 3)
        assert.equal(
          (await page.locator('main .hop .state-completed').first().textContent())?.trim(),
          say(lang, 'hop.completed'),
        )

        const text = await readable()
        assert.doesNotMatch(text, INTERNAL_LABEL)
        for (const name of Object.values(names)) assert.ok(text.includes(name), `${name} on the screen`)
        await page.screenshot({ path: `${SHOTS}teams-detail-${lang}.png`, fullPage: true })
        assert.deepEqual(await axeFindings(page), [])
        assert.deepEqual(errors, [])
      })

    /** The team's screen in `lang` with its task's chain open and every hop shown. */
    const openChain = async (lang: Lang) => {
      await openScreen(page, stack, `teams/${teamId}`, lang)
      await page.locator('main details summary').first().click()
      await page.locator('main [data-hop]').nth(2).waitFor()
    }

    for (const lang of ['en', 'ar'] as const)
      it(`says each member's share as the locale's percent, on a line spaced by " · " (in Arabic "، ": a middle dot by Arabic digits reads as a zero), the sign on its side (${lang})`, async () => {
        const names = await namesIn(lang)
        await openScreen(page, stack, `teams/${teamId}`, lang)
        for (const [role, bps] of [
          ['summariser', 3000],
          ['extractor', 2000],
        ] as const) {
          const member = page.locator(`main li[data-member="${dids[role]}"]`)
          const share = member.locator('.share')
          await share.waitFor()
          assert.equal(
            plain(await share.textContent()),
            say(lang, 'teams.share', { share: PERCENT[lang][bps] }),
          )
          // the line a person reads (the copy button's small print aside): name · share · a hop's cost
          const line = plain(
            await member.evaluate((li) =>
              [...li.childNodes]
                .filter(
                  (n) => !(n.nodeType === n.ELEMENT_NODE && (n as typeof li).classList.contains('id-line')),
                )
                .map((n) => n.textContent)
                .join(''),
            ),
          )
          const hopCost = plain(say(lang, 'teams.hop_cost'))
          const sep = lang === 'ar' ? '، ' : ' · '
          assert.ok(
            line.startsWith(
              `${names[role]}${sep}${say(lang, 'teams.share', { share: PERCENT[lang][bps] })}${sep}${hopCost} `,
            ),
            line,
          )
          if (lang === 'en') assert.doesNotMatch(line, /\S·|·\S/, `spaces around each separator: ${line}`)
          else assert.doesNotMatch(line, /·|،\S/, `Arabic commas, each followed by a space: ${line}`)
          assert.doesNotMatch(line, lang === 'ar' ? /[0-9%]|٣٠٠|٣٬٠٠٠/ : /[٠-٩٪]|300%|3,000/, line)
          // where the sign stands: after the digits as one reads, so right of them in English, left in Arabic
          const x = await share.evaluate((el) => {
            const text = el.firstChild!
            const at = (i: number) => {
              const range = el.ownerDocument.createRange()
              range.setStart(text, i)
              range.setEnd(text, i + 1)
              return range.getBoundingClientRect().left
            }
            const words = text.textContent!
            return { sign: at(words.search(/[%٪]/)), digit: at(words.search(/[0-9٠-٩]/)) }
          })
          if (lang === 'ar')
            assert.ok(x.sign < x.digit, `٪ left of the digits in Arabic: ${JSON.stringify(x)}`)
          else assert.ok(x.sign > x.digit, `% right of the digits in English: ${JSON.stringify(x)}`)
        }
        await page.screenshot({ path: `${SHOTS}teams-members-${lang}.png`, fullPage: true })
      })

    it('shows each hop’s receipt hash short, its copy button carrying the whole hash to the clipboard', async () => {
      const chain = await stack.call(stack.alice, 'GET', `/api/teams/${teamId}/tasks/${taskId}/chain`)
      assert.equal(chain.status, 200, chain.text)
      type Node = { hop_id: string; receipt: { leaf_hash: string } | null; children: Node[] }
      const hashes = new Map<string, string>()
      const walk = (node: Node) => {
        if (node.receipt) hashes.set(node.hop_id, node.receipt.leaf_hash)
        node.children.forEach(walk)
      }
      walk(chain.body.root as Node)
      assert.equal(hashes.size, 3, 'a receipt for each hop')
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.rental.url })
      for (const lang of ['en', 'ar'] as const) {
        await openChain(lang)
        for (const [hopId, hash] of hashes) {
          const line = page
            .locator(`main li[data-hop="${hopId}"] > .hop > .id-line`)
            .filter({ has: page.locator('code.short') })
          assert.equal(plain(await line.locator('span').textContent()), say(lang, 'hop.receipt'))
          const code = line.locator('code.short')
          assert.equal(await code.textContent(), `${hash.slice(0, 10)}…`)
          assert.equal(await code.getAttribute('title'), hash)
          const button = line.locator('button.copy')
          assert.equal(await button.getAttribute('data-copy'), hash)
          assert.equal(
            plain(await button.getAttribute('aria-label')),
            say(lang, 'copy.label', { what: say(lang, 'hop.receipt') }),
          )
        }
        assert.ok(
          !(await page.locator('main').innerText()).includes([...hashes.values()][0]!),
          'no hash in full',
        )
        const [rootHop, rootHash] = [...hashes][0]!
        const button = page.locator(
          `main li[data-hop="${rootHop}"] > .hop > .id-line button.copy[data-copy="${rootHash}"]`,
        )
        await button.click()
        // the button says so once the clipboard has taken it
        await button.filter({ hasText: say(lang, 'copy.done') }).waitFor()
        assert.equal(await page.evaluate('navigator.clipboard.readText()'), rootHash)
      }
      assert.deepEqual(errors, [])
    })

    it('fits a 390 px phone in English and Arabic: nothing wider than the screen, axe-core clean', async () => {
      await page.setViewportSize(PHONE)
      try {
        for (const lang of ['en', 'ar'] as const) {
          await openChain(lang)
          const outside = (await page.evaluate(`[...document.querySelectorAll('main *')]
            .map((el) => ({ el: el.outerHTML.slice(0, 100), box: el.getBoundingClientRect() }))
            .filter(({ box }) => box.width > 0 && (box.left < -1 || box.right > innerWidth + 1))
            .map(({ el }) => el)`)) as string[]
          assert.deepEqual(outside, [])
          assert.equal(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'), true)
          await page.screenshot({ path: `${SHOTS}teams-phone-${lang}.png`, fullPage: true })
          assert.deepEqual(await axeFindings(page), [])
        }
      } finally {
        await page.setViewportSize(WIDE)
      }
      assert.deepEqual(errors, [])
    })
  },
)
