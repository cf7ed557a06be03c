import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { strFromU8, unzipSync } from 'fflate'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { sha256 } from '../../src/areas/auth/hooks.ts'
import { MFA_ACR } from '../../src/areas/auth/step-up-guard.ts'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()
const ARABIC_DIGIT = /[٠-٩]/

describe(
  'the console’s tenant screens in Chromium: an owner and a viewer',
  { skip: executable ? false : NO_CHROMIUM },
  () => {
    let stack: FullStack
    let browser: Browser
    let viewer: Client
    let engagementId = ''
    const shots = mkdtempSync(join(tmpdir(), 'tenant-console-'))
    const errors: string[] = []

    /** A browser context signed in as `who` (its console session cookie), with one page. */
    const pageOf = async (who: Client): Promise<{ context: BrowserContext; page: Page }> => {
      const context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
      await context.addCookies([
        { name: 'rental_session', value: who.jar.get('rental_session')!, url: stack.rental.url },
      ])
      const page = await context.newPage()
      page.setDefaultTimeout(10_000)
      page.on('pageerror', (e) => errors.push(e.message))
      return { context, page }
    }
    const open = async (page: Page, route: string) => {
      await page.goto(`${stack.rental.url}/console#/${route}`)
      await page.locator('main h1').waitFor()
    }
    const shot = (page: Page, name: string) =>
      page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })

    before(async () => {
      // step-up on: the deletion asks for a second factor first
      stack = await startFullStack({ RENTAL_STEP_UP: 'true' })
      console.log(`tenant console screenshots: ${shots}`)
      const owner = stack.alice
      const agentDid = await stack.agentOf('job_summary')
      engagementId = await stack.hireAndSign(owner, 'job_summary', agentDid, stack.newClientKey())
      await stack.call(owner, 'POST', `/api/engagements/${engagementId}/config`, {
        approval: { mode: 'always' },
      })
      const held = await stack.call(owner, 'POST', '/api/tasks', {
        engagement_id: engagementId,
        text: 'A task that waits for approval.',
      })
      assert.equal(held.status, 200, held.text)
      const invited = await stack.call(owner, 'POST', '/v1/users', {
        email: 'viewer@tenant.example',
        role: 'viewer',
      })
      assert.equal(invited.status, 201, invited.text)
      viewer = await stack.signInWith('viewer@tenant.example')
      browser = await launchChromium(executable!)
    })
    after(async () => {
      await browser?.close()
      await stack.close()
    })

    it('shows a viewer no write control, and the API refuses the viewer’s write anyway', async () => {
      const { context, page } = await pageOf(viewer)
      await open(page, 'members')
      await page.getByTestId('members').waitFor()
      await page.getByTestId('readonly').waitFor()
      assert.equal(await page.getByTestId('add-member').count(), 0)
      assert.equal(await page.getByTestId('role-form').count(), 0)
      await shot(page, 'viewer-members')
      await open(page, 'approvals')
      await page.getByTestId('approvals').waitFor()
      assert.equal(await page.locator('main button').count(), 0, 'no approve or reject')
      await open(page, 'danger')
      await page.getByTestId('export').waitFor()
      assert.equal(await page.getByTestId('delete-org').count(), 0)
      // the same write, made from the viewer's page with its session and CSRF token: refused
      const refused = (await page.evaluate(`(async () => {
        const me = await (await fetch('/api/me')).json()
        const res = await fetch('/v1/users', {
          method: 'POST',
          headers: { 'content-type': 'application/json', [me.csrf_header]: me.csrf_token },
          body: JSON.stringify({ email: 'sneaky@tenant.example', role: 'admin' }),
        })
        return { status: res.status, body: await res.json() }
      })()`)) as { status: number; body: { error: { code: string } } }
      assert.equal(refused.status, 403)
      assert.equal(refused.body.error.code, 'forbidden')
      await context.close()
    })

    it('lets an owner see the organization, decide an approval, draw the month’s usage, add a member and a role, and edit the profile', async () => {
      const { context, page } = await pageOf(stack.alice)
      await open(page, 'org')
      await page.getByTestId('org').filter({ hasText: stack.alice.me.organization.id }).waitFor()
      assert.match((await page.getByTestId('org').textContent())!, /AED/)
      await shot(page, 'owner-org')

      await open(page, 'approvals')
      await page.getByTestId('approvals').waitFor()
      await page.getByRole('button', { name: 'Reject' }).click()
      await page.locator('main .empty').waitFor()

      await open(page, 'usage')
      const chart = page.getByTestId('usage-chart')
      await chart.waitFor()
      const today = new Date().getUTCDate()
      assert.equal(await chart.locator('rect.bar-spend').count(), today, 'a bar per day of the month so far')
      const heights = await chart
        .locator('rect.bar-spend')
        .evaluateAll((bars) => bars.map((b) => Number(b.getAttribute('height'))))
      // the month's one task was rejected at its approval: counted, but not charged (as the Overview counts it)
      assert.ok(
        heights.every((h) => h === 0),
        `a rejected task costs nothing: ${heights.join(',')}`,
      )
      const total = page.getByTestId('usage-total')
      assert.match((await total.textContent())!, /AED\s0\.00/)
      assert.equal(await total.getAttribute('data-tasks'), '1')
      await shot(page, 'owner-usage')

      await open(page, 'members')
      await page.fill('#member-email', 'colleague@tenant.example')
      await page.selectOption('#member-role', 'billing')
      await page.getByTestId('add-member').getByRole('button').click()
      await page.getByTestId('members').filter({ hasText: 'colleague@tenant.example' }).waitFor()
      await page.fill('#role-name', 'tenant-auditor')
      // single permissions are behind the form's "advanced" disclosure (groups come first)
      await page.getByTestId('role-form').getByText('Advanced: single permissions').click()
      await page.getByTestId('role-form').getByLabel('audit:read').check()
      await page.getByTestId('role-form').getByRole('button', { name: 'Save the role' }).click()
      await page.getByTestId('roles').filter({ hasText: 'tenant-auditor' }).waitFor()
      const roles = await stack.call(stack.alice, 'GET', '/v1/roles')
      const made = (roles.body.roles as Array<{ name: string; permissions: string[] }>).find(
        (r) => r.name === 'tenant-auditor',
      )
      assert.deepEqual(made?.permissions, ['audit:read'])
      await shot(page, 'owner-members')
      // a role no one holds is deleted after a second click; a held built-in one shows no button
      await page.getByTestId('delete-role-tenant-auditor').getByRole('button', { name: 'Delete' }).click()
      await page.getByRole('button', { name: 'Yes, delete it' }).click()
      await page.getByTestId('delete-role-tenant-auditor').waitFor({ state: 'detached' })
      assert.equal(await page.getByTestId('roles').filter({ hasText: 'tenant-auditor' }).count(), 0)
      assert.equal(await page.getByTestId('delete-role-owner').count(), 0)

      await open(page, 'profile')
      await page.fill('#display-name', 'Alice of the tenant')
      await page.getByTestId('profile').getByLabel('a weekly summary').check()
      await page.getByRole('button', { name: 'Save my profile' }).click()
      await page.getByText('Profile saved.').waitFor()
      const profile = await stack.call(stack.alice, 'GET', '/v1/users/me')
      assert.equal(profile.body.display_name, 'Alice of the tenant')
      assert.equal((profile.body.notifications as Record<string, boolean>).weekly_summary, true)
      assert.equal(await page.getByTestId('account-link').getAttribute('href'), `${stack.idp.url}/ui/account`)

      // Arabic: right to left, the chart's amounts in Arabic digits
      await page.selectOption('#lang', 'ar')
      await open(page, 'usage')
      assert.equal(await page.getAttribute('html', 'dir'), 'rtl')
      await page.getByTestId('usage-total').filter({ hasText: ARABIC_DIGIT }).waitFor()
      await shot(page, 'owner-usage-arabic')
      await page.selectOption('#lang', 'en')
      await context.close()
    })

    it('exports the organization to an archive, and deletes it only after the typed confirmation and a step-up', async () => {
      // bob: an owner of an organization with nothing to settle (erasure goes through)
      const bob = stack.bob
      const { context, page } = await pageOf(bob)
      await open(page, 'danger')
      await page.getByRole('button', { name: 'Export to an archive' }).click()
      const download = page.getByTestId('export-download')
      await download.waitFor()
      // the server's archive (a zip the export job gathered), downloaded by the browser
      const [saved] = await Promise.all([page.waitForEvent('download'), download.click()])
      assert.match(saved.suggestedFilename(), /-export-\d{4}-\d\d-\d\d-exp_[\w-]+\.zip$/)
      const files = unzipSync(new Uint8Array(readFileSync((await saved.path())!)))
      const manifest = JSON.parse(strFromU8(files['manifest.json']!)) as { organization_id: string }
      assert.equal(manifest.organization_id, bob.me.organization.id)
      const org = JSON.parse(strFromU8(files['organization.json']!)) as { id: string }
      assert.equal(org.id, bob.me.organization.id)
      const audit = JSON.parse(strFromU8(files['audit.json']!)) as unknown[]
      assert.ok(audit.length > 0)

      const erase = page.getByRole('button', { name: 'Delete this organization' })
      assert.equal(await erase.isDisabled(), true)
      await page.fill('#confirm-org', 'not-the-id')
      assert.equal(await erase.isDisabled(), true)
      await page.fill('#confirm-org', bob.me.organization.id)
      assert.equal(await erase.isDisabled(), false)
      await shot(page, 'owner-danger')
      await erase.click()
      // no second factor proven yet: the API's words, and the way to the step-up
      const stepUp = page.getByRole('link', { name: 'confirm with my second factor' })
      await stepUp.waitFor()
      assert.equal(await stepUp.getAttribute('href'), '/api/auth/step-up?return_to=%2Fconsole%23%2Fdanger')
      assert.match((await page.getByTestId('step-up').textContent())!, /second factor/)
      // the step-up itself (TOTP at the idp) is step-up.test.ts's: here the session is marked as stepped up
      await stack.db
        .updateTable('console_sessions')
        .set({ acr: MFA_ACR, auth_time: new Date() })
        .where('id_hash', '=', sha256(bob.jar.get('rental_session')!))
        .execute()
      await erase.click()
      await page.getByText('The organization is erased').waitFor()
      const erased = await stack.db
        .selectFrom('orgs')
        .select(['name', 'erased_at'])
        .where('id', '=', bob.me.organization.id)
        .executeTakeFirstOrThrow()
      assert.ok(erased.erased_at, 'erased as the erasure area does')
      const archives = await stack.db
        .selectFrom('tenant_exports')
        .select('id')
        .where('org_id', '=', bob.me.organization.id)
        .execute()
      assert.deepEqual(archives, [], 'the sealed export archives went with the organization')
      assert.deepEqual(errors, [])
      await context.close()
    })
  },
)
