import assert from 'node:assert/strict'
import { createDecipheriv, createPrivateKey, createPublicKey, pbkdf2Sync } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { b64uDecode } from '@svc/trust/base64url'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import { verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import type { Browser, Page } from 'playwright-core'
import { DEMO_EMAIL } from '../../../idp/src/areas/accounts/service.ts'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

const executable = chromiumPath()
/** Screenshots of the main screens, for a reviewer to look at (ignored by git). */
const SHOTS = fileURLToPath(new URL('../.screenshots/', import.meta.url))
const ARABIC_DIGIT = /[٠-٩]/

describe('the web console (/console) in Chromium: sign-in, hire signed in the browser, a live task, Arabic, sign-out', () => {
  let stack: FullStack
  let browser: Browser | undefined
  let page: Page
  const errors: string[] = []

  before(async () => {
    stack = await startFullStack()
    mkdirSync(SHOTS, { recursive: true })
    if (!executable) return
    browser = await launchChromium(executable)
    page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage()
    page.setDefaultTimeout(10_000)
    page.on('pageerror', (e) => errors.push(e.message))
    // the browser's own favicon request is not the console's
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico') && !r.url().endsWith('/api/me'))
        errors.push(`${r.status()} ${r.url()}`)
    })
  })
  after(async () => {
    await browser?.close()
    await stack.close()
  })

  const shot = (name: string) => page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true })

  it('serves the page under a strict CSP, its libraries from node_modules, and sends a stranger to sign in', async () => {
    const stranger = await fetch(`${stack.rental.url}/console`, { redirect: 'manual' })
    assert.equal(stranger.status, 302)
    assert.equal(stranger.headers.get('location'), '/auth/login')
    // the console's language (its ?lang=, else the cookie its browser code keeps) goes to the idp
    for (const [path, cookie, location] of [
      ['/console?lang=ar', '', '/auth/login?ui_locales=ar'],
      ['/console', 'console_lang=ar', '/auth/login?ui_locales=ar'],
      ['/console?lang=en', 'console_lang=ar', '/auth/login?ui_locales=en'],
      ['/console?lang=xx', 'console_lang=fr', '/auth/login'],
    ]) {
      const res = await fetch(`${stack.rental.url}${path}`, {
        redirect: 'manual',
        headers: { cookie: cookie! },
      })
      assert.equal(res.headers.get('location'), location, `${path} ${cookie}`)
    }
    const res = await stack.alice.jar.fetch(`${stack.rental.url}/console`)
    assert.equal(res.status, 200)
    const csp = res.headers.get('content-security-policy')!
    assert.match(csp, /default-src 'self'/)
    assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'(;|$)/)
    assert.doesNotMatch(csp, /unsafe/)
    assert.match(
      await res.text(),
      /<script type="importmap">\{"imports":\{"preact":"\/console\/vendor\/preact\.mjs"/,
    )
    for (const file of ['preact.mjs', 'hooks.mjs', 'htm.mjs', 'canonicalize.mjs', 'base.mjs']) {
      const lib = await fetch(`${stack.rental.url}/console/vendor/${file}`)
      assert.equal(lib.status, 200, file)
      assert.match(lib.headers.get('content-type')!, /javascript/)
      const again = await fetch(`${stack.rental.url}/console/vendor/${file}`, {
        headers: { 'if-none-match': lib.headers.get('etag')! },
      })
      assert.equal(again.status, 304)
    }
    const missing = await fetch(`${stack.rental.url}/console/assets/..%2Fsrc%2Fapp.ts`)
    assert.equal(missing.status, 404)
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'not_found')
  })

  it(
    'a person signs in at the idp, lands in /console, hires with a key made in the browser, runs a task live, reads it in Arabic and signs out everywhere',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const me = (await stack.call(stack.alice, 'GET', '/api/me')).body as {
        client: { name: string }
        organization: { id: string }
      }
      const agentDid = await stack.agentOf('job_summary')

      // sign-in through the idp's own login page
      await page.goto(`${stack.rental.url}/console`)
      await page.waitForURL(/\/ui\/login/)
      await page.fill('#email', DEMO_EMAIL)
      await page.fill('#password', stack.idp.ctx.config.demoPassword)
      await page.click('button[type=submit]')
      await page.waitForURL(`${stack.rental.url}/console`)
      await page.getByTestId('person').waitFor()
      assert.equal(await page.getByTestId('person').textContent(), me.client.name)
      // the header names the organization (its id stays in small print on Home)
      const org = (await stack.call(stack.alice, 'GET', '/v1/org?lang=en')).body as { name: string }
      await page.getByTestId('header-org').waitFor()
      assert.equal(await page.getByTestId('header-org').textContent(), org.name)
      assert.doesNotMatch((await page.textContent('header'))!, new RegExp(me.organization.id))
      await page.getByTestId('wallet').filter({ hasText: /AED/ }).waitFor()
      await shot('1-home')

      // the public pages show the signed-in state
      const landing = await page.context().request.get(`${stack.rental.url}/`)
      assert.match(await landing.text(), /<a href="\/console\?lang=en">Console<\/a>/)

      // hire: the key is made in the browser; what is signed is shown with its hash
      await page.goto(`${stack.rental.url}/console#/market`)
      const signatures: string[] = []
      page.on('request', (r) => {
        if (r.method() === 'POST' && new URL(r.url()).pathname.endsWith('/signatures'))
          signatures.push(r.postData() ?? '')
      })
      await page
        .locator(`[data-job=job_summary] .agent[data-agent="${agentDid}"]`)
        .getByRole('button', { name: /^Hire / })
        .click()
      await page.waitForURL(/#\/engagements\/eng_/)
      const engagementId = page.url().split('/').pop()!
      await page.locator('.signable .ok').first().waitFor()
      assert.equal(await page.locator('.signable .ok').count(), 2, 'the SLA and the escrow hashes match')
      await shot('2-sign')
      await page.getByRole('button', { name: /Sign the agreement/ }).click()
      await page.getByTestId('engagement-state').filter({ hasText: 'active' }).waitFor()

      // the signature, checked here with the repo's own Ed25519 against the did:key the browser made
      const detail = (await stack.call(stack.alice, 'GET', `/api/engagements/${engagementId}`)).body as {
        engagement: { client_did: string; state: string; escrows: Array<{ state: string; body: unknown }> }
        package: { sla: { body: unknown } }
      }
      assert.equal(detail.engagement.state, 'active')
      assert.equal(detail.engagement.escrows[0]!.state, 'open')
      const sent = JSON.parse(signatures[0]!) as {
        sla_signature: string
        escrow_signatures: Array<{ signature: string }>
      }
      const key = ed25519FromDidKey(detail.engagement.client_did)
      assert.ok(verifyEd25519(key, canonicalBytes(detail.package.sla.body), b64uDecode(sent.sla_signature)))
      assert.ok(
        verifyEd25519(
          key,
          canonicalBytes(detail.engagement.escrows[0]!.body),
          b64uDecode(sent.escrow_signatures[0]!.signature),
        ),
      )
      // the key in the browser's IndexedDB: its private half not extractable (a string: browser code, not Node's)
      const stored = await page.evaluate(`new Promise((resolve, reject) => {
        const open = indexedDB.open('rental-console')
        open.onerror = () => reject(open.error)
        open.onsuccess = () => {
          const get = open.result.transaction('keys').objectStore('keys').get('client')
          get.onsuccess = () => resolve({
            extractable: get.result.privateKey.extractable,
            type: get.result.privateKey.algorithm.name,
          })
        }
      })`)
      assert.deepEqual(stored, { extractable: false, type: 'Ed25519' })

      // a task, its progress seen live from the events stream
      await page.fill(
        '#task-text',
        'The console shows a task while it runs. Its events arrive as they happen.',
      )
      await page.getByRole('button', { name: 'Run the task' }).click()
      await page.waitForURL(/#\/tasks\/tsk_/)
      await page.locator('[data-testid=task-state][data-state=completed]').waitFor()
      await page.locator('[data-testid=events] li[data-type="task.trace"]').waitFor()
      assert.ok((await page.locator('[data-testid=events] li[data-type]').count()) >= 3)
      assert.match((await page.getByTestId('output').textContent())!, /\S/)
      await shot('3-task')

      // the organization's lists: a budget made through the API shows with its money; the others say what to do
      const budget = await stack.call(stack.alice, 'POST', '/api/budgets', {
        limit_fils: 100_000,
        name: 'Monthly cap',
      })
      assert.equal(budget.status, 200, budget.text)
      for (const name of ['budgets', 'invoices', 'refunds', 'schedules', 'webhooks']) {
        await page.goto(`${stack.rental.url}/console#/${name}`)
        await page.locator('main table.list, main .empty').first().waitFor()
        assert.equal(await page.locator('main .error').count(), 0, name)
      }
      await page.goto(`${stack.rental.url}/console#/budgets`)
      await page.getByTestId('budgets').filter({ hasText: 'Monthly cap' }).waitFor()
      assert.match((await page.getByTestId('budgets').textContent())!, /AED\s1,000\.00/)
      await shot('4-budgets')

      // Arabic: right to left, amounts as the API writes them in Arabic, remembered across a reload
      await page.selectOption('#lang', 'ar')
      await page.goto(`${stack.rental.url}/console#/`)
      assert.equal(await page.getAttribute('html', 'dir'), 'rtl')
      const statement = (await stack.call(stack.alice, 'GET', '/api/statements?lang=ar')).body as {
        closing: { wallet: { display: string } }
      }
      const wallet = page.getByTestId('wallet').filter({ hasText: ARABIC_DIGIT })
      await wallet.waitFor()
      assert.equal((await wallet.textContent())!.trim(), statement.closing.wallet.display)
      await page.goto(`${stack.rental.url}/console#/engagements`)
      await page.locator('.money').first().waitFor()
      assert.match((await page.locator('.money').first().textContent())!, ARABIC_DIGIT)
      await page.setViewportSize({ width: 390, height: 844 })
      await page.goto(`${stack.rental.url}/console#/`)
      await page.getByTestId('wallet').filter({ hasText: ARABIC_DIGIT }).waitFor()
      await shot('5-home-arabic-phone')
      await page.setViewportSize({ width: 1200, height: 900 })

      // sign-out: here and at the idp (RP-initiated logout), back on the landing page
      const idpLogout = page.waitForRequest((r) => r.url().startsWith(`${stack.idp.url}/logout?`))
      await page.getByRole('button', { name: 'تسجيل الخروج' }).click()
      const logoutUrl = new URL((await idpLogout).url())
      assert.match(logoutUrl.searchParams.get('id_token_hint') ?? '', /^eyJ/)
      assert.equal(logoutUrl.searchParams.get('post_logout_redirect_uri'), `${stack.rental.url}/`)
      // signed out in Arabic: the idp's page and the landing page in Arabic too
      assert.equal(logoutUrl.searchParams.get('ui_locales'), 'ar')
      await page.waitForURL(`${stack.rental.url}/`)
      assert.equal(await page.getAttribute('html', 'lang'), 'ar')
      assert.match((await page.textContent('nav'))!, /تسجيل الدخول/)
      // the landing page's CSP allows no script: the browser's cookies are read through its context
      const meAfter = await page.context().request.get(`${stack.rental.url}/api/me`)
      assert.equal(meAfter.status(), 401, 'the console session ended')
      // signing in again from the console: the idp is asked for the language chosen there (ui_locales)
      const authorize = page.waitForRequest((r) => r.url().startsWith(`${stack.idp.url}/authorize?`))
      await page.goto(`${stack.rental.url}/console`)
      assert.equal(new URL((await authorize).url()).searchParams.get('ui_locales'), 'ar')
      await page.waitForURL(/\/ui\/login/)
      assert.ok(await page.locator('#password').isVisible(), 'the idp asks to sign in again')
      assert.equal(await page.getAttribute('html', 'lang'), 'ar')
      assert.deepEqual(errors, [])
    },
  )

  it(
    'makes a key with an encrypted backup, which opens outside the browser and restores the same key in another',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      const PASSPHRASE = 'a long passphrase kept apart'
      /** A fresh browser profile (no key in its IndexedDB), signed in as the demo account. */
      const freshPage = async () => {
        const context = await browser!.newContext({ acceptDownloads: true })
        // a browser without a save dialog (File System Access): the backup is a download the person confirms
        await context.addInitScript('delete window.showSaveFilePicker')
        const fresh = await context.newPage()
        fresh.setDefaultTimeout(10_000)
        fresh.on('pageerror', (e) => errors.push(e.message))
        await fresh.goto(`${stack.rental.url}/console`)
        await fresh.waitForURL(/\/ui\/login/)
        await fresh.fill('#email', DEMO_EMAIL)
        await fresh.fill('#password', stack.idp.ctx.config.demoPassword)
        await fresh.click('button[type=submit]')
        await fresh.waitForURL(`${stack.rental.url}/console`)
        await fresh.getByTestId('key-panel').waitFor()
        return fresh
      }
      const first = await freshPage()
      const form = first.getByTestId('key-backup-form')
      await form.locator('#key-pass').fill(PASSPHRASE)
      await form.locator('#key-pass-again').fill(`${PASSPHRASE}!`)
      await form.getByRole('button').click()
      // said at the field, before anything is made
      assert.match((await form.locator('#key-pass-again-problem').textContent())!, /passphrases differ/)
      await form.locator('#key-pass-again').fill(PASSPHRASE)
      await form.getByRole('button').click()
      // made, but not "backed up" until the file is saved
      await first.getByTestId('key-backup-unsaved').waitFor()
      assert.equal(await first.getByTestId('key-backed-up').count(), 0)
      const did = (await first.locator('[data-testid=key-panel] code.did').textContent())!
      const [download] = await Promise.all([
        first.waitForEvent('download'),
        first.getByTestId('key-backup-save').click(),
      ])
      await first.getByTestId('key-backup-saved').click()
      await first.getByTestId('key-backed-up').waitFor()
      const file = readFileSync((await download.path())!, 'utf8')
      const backup = JSON.parse(file) as {
        did: string
        kdf: { iterations: number; salt: string }
        cipher: { iv: string }
        ciphertext: string
      }
      assert.equal(backup.did, did)
      assert.ok(!file.includes(PASSPHRASE))
      // opened here with Node's own crypto: PBKDF2-SHA-256 into AES-256-GCM, the did:key as associated data
      const sealed = Buffer.from(backup.ciphertext, 'base64url')
      const decipher = createDecipheriv(
        'aes-256-gcm',
        pbkdf2Sync(
          PASSPHRASE,
          Buffer.from(backup.kdf.salt, 'base64url'),
          backup.kdf.iterations,
          32,
          'sha256',
        ),
        Buffer.from(backup.cipher.iv, 'base64url'),
      )
      decipher.setAAD(Buffer.from(did))
      decipher.setAuthTag(sealed.subarray(sealed.length - 16))
      const pkcs8 = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()])
      const publicJwk = createPublicKey(
        createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }),
      ).export({
        format: 'jwk',
      })
      assert.deepEqual(Buffer.from(publicJwk.x!, 'base64url'), Buffer.from(ed25519FromDidKey(did)))
      // kept here non-extractable all the same
      const extractable = await first.evaluate(`new Promise((resolve) => {
        const open = indexedDB.open('rental-console')
        open.onsuccess = () => {
          const get = open.result.transaction('keys').objectStore('keys').get('client')
          get.onsuccess = () => resolve(get.result.privateKey.extractable)
        }
      })`)
      assert.equal(extractable, false)
      await first.screenshot({ path: `${SHOTS}6-key-backup.png`, fullPage: true })
      await first.context().close()

      // another browser: a wrong passphrase is said in words; the right one restores the same key
      const second = await freshPage()
      await second.getByText('Restore a key from its backup').click()
      const restore = second.getByTestId('key-restore-form')
      await restore
        .locator('#key-file')
        .setInputFiles({ name: 'backup.json', mimeType: 'application/json', buffer: Buffer.from(file) })
      await restore.locator('#key-restore-pass').fill('not the passphrase at all')
      await restore.getByRole('button', { name: 'Restore the key' }).click()
      assert.match((await restore.locator('.error').textContent())!, /does not open this backup/)
      await restore.locator('#key-restore-pass').fill(PASSPHRASE)
      await restore.getByRole('button', { name: 'Restore the key' }).click()
      await second.getByTestId('key-backed-up').waitFor()
      assert.equal(await second.locator('[data-testid=key-panel] code.did').textContent(), did)
      // the restored key signs for that did:key
      const signed = (await second.evaluate(`import('/console/assets/keys.js').then(async (keys) => {
        const key = await keys.currentKey()
        return { did: key.did, signature: await keys.signBody(key, { check: 'restored' }) }
      })`)) as { did: string; signature: string }
      assert.equal(signed.did, did)
      assert.ok(
        verifyEd25519(
          ed25519FromDidKey(did),
          canonicalBytes({ check: 'restored' }),
          b64uDecode(signed.signature),
        ),
      )
      await second.context().close()
      assert.deepEqual(errors, [])
    },
  )
})
