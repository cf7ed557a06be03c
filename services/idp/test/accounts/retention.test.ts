import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { RunningService } from '@svc/kit'
import { CookieJar, request } from '@svc/kit/testing'
import { b64uDecode } from '@svc/trust/base64url'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { ed25519FromSeed } from '@svc/trust/ed25519'
import { compactDecrypt, decodeProtectedHeader } from 'jose'
import * as oidc from 'openid-client'
import type { LedgerConfig } from '../../../ledger/src/config.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, csrfOf, registerClient } from '@svc/testing/idp-flow'
import { idpWithLedger, receiptsAbout } from '@svc/testing/ledger'

const CALLBACK = 'https://console.example.com/callback'
const WRITER = 'test-idp-writer-token-retention'
const PASSPHRASE = 'correct horse battery staple'

describe('key backups and retention holds, each receipted', () => {
  let log: RunningService<LedgerConfig>
  let service: RunningService<IdpConfig>
  let did: string
  let userId: string
  const jar = new CookieJar()

  const receiptTypes = async (count: number) =>
    (await receiptsAbout({ url: log.url, writer: WRITER }, did, (r) => r.length >= count)).map(
      (r): Record<string, unknown> => ({ type: r.receipt.type, ...r.receipt.data }),
    )
  const post = async (path: string, fields: Record<string, string>, withCsrf = true) => {
    const account = await (await jar.fetch(`${service.url}/ui/account`)).text()
    return jar.fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: withCsrf ? csrfOf(account) : 'not-the-token', ...fields }).toString(),
    })
  }
  const admin = (method: string, path: string, body?: unknown, token = ADMIN) =>
    request(`${service.url}${path}`, {
      method,
      headers: { 'x-admin-token': token, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })

  before(async () => {
    ;({ log, service } = await idpWithLedger(WRITER))
    const console = await registerClient(service, { redirect_uris: [CALLBACK] })
    const tokens = await browser(service, console.config, CALLBACK, { jar }).signIn()
    did = (await oidc.fetchUserInfo(console.config, tokens.access_token, tokens.claims()!.sub)).did as string
    userId = (await admin('GET', `/manage/v1/users?email=${DEMO_EMAIL}`)).body.id as string
    await receiptTypes(1) // the sign-in's login.new_device
  })
  after(async () => {
    await service.close()
    await log.close()
  })

  it('exports the account’s did:key as a passphrase-encrypted JWE that opens to the same key, and receipts it', async () => {
    const password = service.ctx.config.demoPassword
    const refusals = [
      await post('/ui/account/key-backup', { current_password: 'not-the-password', passphrase: PASSPHRASE }),
      await post('/ui/account/key-backup', { current_password: password, passphrase: 'too short' }),
    ]
    assert.deepEqual(
      refusals.map((r) => r.status),
      [400, 400],
    )
    const wrongCsrf = await post(
      '/ui/account/key-backup',
      { current_password: password, passphrase: PASSPHRASE },
      false,
    )
    assert.equal(wrongCsrf.status, 403)

    const res = await post('/ui/account/key-backup', { current_password: password, passphrase: PASSPHRASE })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/jose')
    assert.match(res.headers.get('content-disposition')!, /attachment/)
    const jwe = await res.text()
    assert.deepEqual(decodeProtectedHeader(jwe), {
      alg: 'PBES2-HS512+A256KW',
      enc: 'A256GCM',
      cty: 'jwk+json',
      p2c: 210_000,
      p2s: decodeProtectedHeader(jwe).p2s,
    })
    await assert.rejects(
      compactDecrypt(jwe, new TextEncoder().encode('a wrong passphrase'), {
        maxPBES2Count: 210_000,
        keyManagementAlgorithms: ['PBES2-HS512+A256KW'],
      }),
    )
    const { plaintext } = await compactDecrypt(jwe, new TextEncoder().encode(PASSPHRASE), {
      maxPBES2Count: 210_000,
      keyManagementAlgorithms: ['PBES2-HS512+A256KW'],
    })
    const jwk = JSON.parse(new TextDecoder().decode(plaintext)) as {
      kty: string
      crv: string
      x: string
      d: string
    }
    assert.deepEqual([jwk.kty, jwk.crv], ['OKP', 'Ed25519'])
    assert.deepEqual(ed25519FromSeed(b64uDecode(jwk.d)).publicKey, b64uDecode(jwk.x))
    assert.equal(didKeyFromEd25519(b64uDecode(jwk.x)), did)

    const receipts = await receiptTypes(2)
    assert.deepEqual(receipts.at(-1), {
      type: 'identity.key_backup_exported',
      format: 'jwe',
      alg: 'PBES2-HS512+A256KW',
      enc: 'A256GCM',
    })
  })

  it('places a hold on the account’s data, receipted by a digest of its reason', async () => {
    assert.equal(
      (await admin('PUT', `/manage/v1/users/${userId}/retention-hold`, { reason: 'x' }, 'wrong-token'))
        .status,
      401,
    )
    assert.equal(
      (await admin('PUT', `/manage/v1/users/usr_nobody/retention-hold`, { reason: 'case 2026-118' })).status,
      404,
    )
    assert.equal(
      (await admin('PUT', `/manage/v1/users/${userId}/retention-hold`, { reason: '' })).status,
      400,
    )
    assert.equal((await admin('GET', `/manage/v1/users/${userId}/retention-hold`)).status, 404)

    const placed = await admin('PUT', `/manage/v1/users/${userId}/retention-hold`, {
      reason: 'case 2026-118',
    })
    assert.equal(placed.status, 200)
    assert.equal(placed.body.reason, 'case 2026-118')
    assert.equal(
      (await admin('GET', `/manage/v1/users/${userId}/retention-hold`)).body.reason,
      'case 2026-118',
    )
    const hold = (await receiptTypes(3)).at(-1)!
    assert.equal(hold.type, 'data.retention.hold')
    assert.equal(hold.hold, 'placed')
    assert.match(hold.reason_digest as string, /^sha256:[0-9a-f]{64}$/)
    assert.ok(!JSON.stringify(hold).includes('2026-118'), 'the reason itself stays off the ledger')
  })

  it('under the hold, the owner’s deletion closes the account and keeps its data until the hold is released', async () => {
    const closed = await post('/ui/account/delete', { confirm: 'delete my account' })
    assert.equal(closed.status, 200)
    assert.match(await closed.text(), /Account closed/)
    const kept = await admin('GET', `/manage/v1/users?email=${DEMO_EMAIL}`)
    assert.equal(kept.status, 200, 'the account’s data is still there')
    assert.equal(kept.body.disabled, true, 'and it is closed')
    assert.equal((await jar.fetch(`${service.url}/ui/account`, { redirect: 'manual' })).status !== 200, true)
    assert.deepEqual((await receiptTypes(4)).at(-1), {
      type: 'data.retention.hold',
      record: 'account',
      hold: 'deletion_deferred',
    })

    const released = await admin('DELETE', `/manage/v1/users/${userId}/retention-hold`)
    assert.equal(released.status, 200)
    assert.equal(released.body.deleted, true)
    assert.equal((await admin('GET', `/manage/v1/users?email=${DEMO_EMAIL}`)).status, 404)
    // written one after the other, delivered together: the ledger may hold them in either order
    const last = (await receiptTypes(6)).slice(-2)
    assert.deepEqual(last.map((r) => [r.type, r.hold ?? r.reason]).sort(), [
      ['data.retention.deleted', 'deleted by its owner'],
      ['data.retention.hold', 'released'],
    ])
    assert.equal((await admin('DELETE', `/manage/v1/users/${userId}/retention-hold`)).status, 404)
  })
})
