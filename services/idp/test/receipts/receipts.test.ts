import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, request, testEnv } from '@svc/kit/testing'
import { b64uDecode } from '@svc/trust/base64url'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import { verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import * as oidc from 'openid-client'
import { ledger } from '../../../ledger/src/app.ts'
import type { LedgerConfig } from '../../../ledger/src/config.ts'
import type { IdpConfig } from '../../src/config.ts'
import { idpWithLedger, receiptsAbout } from '@svc/testing/ledger'
import { ADMIN, browser, csrfOf, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://partner.example.com/callback'
const WRITER = 'test-idp-writer-token-0001'

describe('self-receipts on the ledger: consent and new devices', () => {
  let log: RunningService<LedgerConfig>
  let service: RunningService<IdpConfig>
  let partner: oidc.Configuration
  let partnerId: string
  let did: string

  /** The receipts the ledger holds about a subject, once `count` of them have arrived. */
  const onLedger = (subject: string, count: number) =>
    receiptsAbout({ url: log.url, writer: WRITER }, subject, (r) => r.length >= count)

  before(async () => {
    ;({ log, service } = await idpWithLedger(WRITER))
    ;({ config: partner, clientId: partnerId } = await registerClient(service, {
      client_name: 'Partner',
      first_party: false,
      redirect_uris: [CALLBACK],
    }))
  })
  after(async () => {
    await service.close()
    await log.close()
  })

  it('receipts the first sign-in from a browser as login.new_device, and not the next ones', async () => {
    const console = await registerClient(service, { redirect_uris: [CALLBACK] })
    const jar = new CookieJar()
    const first = await browser(service, console.config, CALLBACK, { jar }).signIn()
    did = (await oidc.fetchUserInfo(console.config, first.access_token, first.claims()!.sub)).did as string
    assert.match(did, /^did:key:z6Mk/)
    const [receipt] = await onLedger(did, 1)
    assert.equal(receipt!.receipt.type, 'login.new_device')
    assert.deepEqual(receipt!.receipt.data.amr, ['pwd'])

    // the issuer's did:key signed the JCS form of the receipt
    const issuerKey = ed25519FromDidKey(receipt!.receipt.issuer)
    assert.ok(
      verifyEd25519(issuerKey, canonicalBytes(receipt!.receipt), b64uDecode(receipt!.signature)),
      'the receipt verifies against the issuer DID',
    )

    // the same browser again (prompt=login forces a fresh sign-in): no new device
    await browser(service, console.config, CALLBACK, { jar }).signIn({ prompt: 'login' })
    const page = await jar.fetch(`${service.url}/ui/account`)
    const events = (await page.text()).match(/data-event="login\.new_device"/g) ?? []
    assert.equal(events.length, 1)
    // a different browser is a new device
    await browser(service, console.config, CALLBACK).signIn()
    const receipts = await onLedger(did, 2)
    assert.deepEqual(
      receipts.map((r) => r.receipt.type),
      ['login.new_device', 'login.new_device'],
    )
    assert.notEqual(receipts[0]!.receipt.data.device, receipts[1]!.receipt.data.device)
  })

  it('receipts consent.granted, whose leaf hash introspection gives as the consent commitment', async () => {
    const jar = new CookieJar()
    const user = browser(service, partner, CALLBACK, {
      jar,
      consent: { decision: 'approve', scopes: ['email', 'offline_access'] },
    })
    const tokens = await user.signIn({ scope: 'openid email offline_access' })
    const info = await oidc.tokenIntrospection(partner, tokens.access_token)
    assert.equal(info.active, true)
    assert.equal(info.did, undefined, 'no DID for a third-party client')
    const consent = info.consent as Record<string, unknown>
    assert.equal(consent.scope, 'openid email offline_access')
    assert.equal(consent.purpose, 'access to your account by Partner')
    assert.equal(typeof consent.granted_at, 'number')

    const granted = (await onLedger(did, 4)).find((r) => r.receipt.type === 'consent.granted')!
    assert.equal(granted.leaf_hash, consent.commitment)
    assert.deepEqual(granted.receipt.data, {
      client_id: partnerId,
      scope: 'openid email offline_access',
      purpose: 'access to your account by Partner',
    })

    // withdrawn from the account page: the refresh token dies, the access token stops standing
    const account = await jar.fetch(`${service.url}/ui/account`)
    const page = await account.text()
    assert.match(page, /<strong>Partner<\/strong>: openid, email, offline_access/)
    const withdraw = await jar.fetch(`${service.url}/ui/account/consents/withdraw`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page), client_id: partnerId }).toString(),
    })
    assert.equal(withdraw.status, 303)
    await assert.rejects(
      oidc.refreshTokenGrant(partner, tokens.refresh_token!),
      (err: Error & { error?: string }) => err.error === 'invalid_grant',
    )
    assert.deepEqual(await oidc.tokenIntrospection(partner, tokens.access_token), { active: false })
    await assert.rejects(
      oidc.fetchUserInfo(partner, tokens.access_token, tokens.claims()!.sub),
      (err: Error & { status?: number }) => err.status === 401,
    )
    const withdrawn = (await onLedger(did, 5)).find((r) => r.receipt.type === 'consent.withdrawn')!
    assert.deepEqual(withdrawn.receipt.data, { client_id: partnerId, scope: 'openid email offline_access' })

    // nothing left to withdraw
    const again = await jar.fetch(`${service.url}/ui/account/consents/withdraw`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page), client_id: partnerId }).toString(),
    })
    assert.equal(again.status, 404)
  })
  it('reconciles: nothing missing while the ledger has every receipt, and says what it lacks once it is down', async () => {
    const reconcile = (query: string, admin = ADMIN) =>
      request(`${service.url}/manage/v1/reconcile?${query}`, { headers: { 'x-admin-token': admin } })
    await onLedger(did, 5)
    assert.deepEqual((await reconcile('hours=24')).body, { hours: 24, discrepancies: [] })
    assert.equal((await reconcile('hours=0')).status, 400)
    assert.equal((await reconcile('hours=24', 'not-the-admin-token-1234')).status, 401)

    await log.close()
    await browser(
      service,
      (await registerClient(service, { redirect_uris: [CALLBACK] })).config,
      CALLBACK,
    ).signIn()
    const lacking = (await reconcile('hours=1')).body.discrepancies as Array<{ type: string; reason: string }>
    assert.ok(lacking.some((d) => d.type === 'login.new_device' && d.reason === 'not_delivered'))
    log = await startService(ledger, testEnv({ LEDGER_WRITERS: `idp:${WRITER}` }), { fresh: true })
  })
})
