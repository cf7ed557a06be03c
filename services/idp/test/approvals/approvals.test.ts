import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { RunningService } from '@svc/kit'
import { CookieJar, request } from '@svc/kit/testing'
import { canonicalize } from '@svc/trust/jcs'
import type { Kysely } from 'kysely'
import type { LedgerConfig } from '../../../ledger/src/config.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import type { IdpTables } from '../../src/db.ts'
import { idpWithLedger, receiptsAbout } from '@svc/testing/ledger'
import { browser, csrfOf, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://assistant.example.com/callback'
const WRITER = 'test-idp-writer-token-0002'
/** What /approvals answers, or its error. */
interface Answer {
  status: number
  body: {
    approval_id: string
    status: string
    expires_in?: number
    interval?: number
    approval_uri: string
    detail?: unknown
    receipt: string
    error?: string
  }
}
const answerOf = (res: Promise<unknown>) => res as Promise<Answer>
const ASK = {
  action: 'Pay 420 EUR to Lisbon Dental',
  detail: { amount: 420, currency: 'EUR', payee: 'Lisbon Dental' },
}

describe('approvals: ask my human', () => {
  let log: RunningService<LedgerConfig>
  let service: RunningService<IdpConfig>
  let assistant: Awaited<ReturnType<typeof registerClient>>
  let other: Awaited<ReturnType<typeof registerClient>>
  let jar: CookieJar
  let accessToken: string
  let did: string

  before(async () => {
    ;({ log, service } = await idpWithLedger(WRITER, { IDP_APPROVAL_INTERVAL_S: '1' }))
    assistant = await registerClient(service, {
      client_name: 'Assistant',
      first_party: false,
      redirect_uris: [CALLBACK],
    })
    other = await registerClient(service, { client_name: 'Other', redirect_uris: [CALLBACK] })
    jar = new CookieJar()
    const user = browser(service, assistant.config, CALLBACK, {
      jar,
      consent: { decision: 'approve', scopes: ['email'] },
    })
    accessToken = (await user.signIn()).access_token
    const db = service.ctx.database!.db as Kysely<IdpTables>
    did = (
      await db.selectFrom('users').select('did').where('email', '=', DEMO_EMAIL).executeTakeFirstOrThrow()
    ).did!
  })
  after(async () => {
    await service.close()
    await log.close()
  })

  const basic = (client = assistant) =>
    `Basic ${Buffer.from(`${client.clientId}:${client.secret}`).toString('base64')}`

  const ask = (body: Record<string, unknown>, token = accessToken, client = assistant) =>
    answerOf(
      request(`${service.url}/approvals`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: client.clientId, client_secret: client.secret, ...body }),
      }),
    )

  const poll = (id: string, client = assistant) =>
    answerOf(request(`${service.url}/approvals/${id}`, { headers: { authorization: basic(client) } }))

  /** Polls as a well-behaved client: waiting the interval first. */
  const pollAfterInterval = async (id: string) => {
    await new Promise((r) => setTimeout(r, 1100))
    return poll(id)
  }

  const answer = async (id: string, decision: 'approve' | 'refuse') => {
    const page = await (await jar.fetch(`${service.url}/ui/account`)).text()
    return jar.fetch(`${service.url}/ui/approvals/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page), decision }).toString(),
    })
  }

  /** The ledger's receipt with this leaf hash, once it has arrived. */
  const onLedger = async (leafHash: string) =>
    (
      await receiptsAbout({ url: log.url, writer: WRITER }, did, (r) =>
        r.some((x) => x.leaf_hash === leafHash),
      )
    ).find((x) => x.leaf_hash === leafHash)!.receipt

  it('is asked, shown to the user, approved, polled no faster than the interval, and receipted', async () => {
    const created = await ask({ ...ASK, expires_in: 600 })
    assert.equal(created.status, 201)
    const { approval_id, status, expires_in, interval, approval_uri } = created.body
    assert.match(approval_id, /^apr_/)
    assert.deepEqual({ status, expires_in, interval }, { status: 'pending', expires_in: 600, interval: 1 })
    assert.equal(approval_uri, `${service.url}/ui/approvals/${approval_id}`)

    const first = await poll(approval_id)
    assert.equal(first.status, 200)
    assert.equal(first.body.status, 'pending')
    const tooSoon = await poll(approval_id)
    assert.equal(tooSoon.status, 400)
    assert.equal(tooSoon.body.error, 'slow_down')

    const account = await (await jar.fetch(`${service.url}/ui/account`)).text()
    assert.match(account, new RegExp(`<a href="/ui/approvals/${approval_id}">${ASK.action}</a>`))
    const page = await (await jar.fetch(approval_uri)).text()
    assert.match(page, /<h1>Assistant asks you to approve<\/h1>/)
    assert.match(page, /<td>payee<\/td>\s*<td>Lisbon Dental<\/td>/)
    assert.equal((await answer(approval_id, 'approve')).status, 303)

    const done = await pollAfterInterval(approval_id)
    assert.equal(done.body.status, 'approved')
    assert.deepEqual(done.body.detail, ASK.detail)
    const receipt = await onLedger(done.body.receipt)
    assert.equal(receipt.type, 'approval.approved')
    assert.deepEqual(receipt.data, {
      approval_id,
      client_id: assistant.clientId,
      request_digest: createHash('sha256').update(canonicalize(ASK)).digest('base64url'),
    })
    assert.equal((await answer(approval_id, 'refuse')).status, 409, 'answered once')
  })

  it('is refused by the user, receipted as approval.denied', async () => {
    const { approval_id } = (await ask({ action: 'Delete my old photos' })).body
    assert.equal((await answer(approval_id, 'refuse')).status, 303)
    const done = await pollAfterInterval(approval_id)
    assert.equal(done.body.status, 'denied')
    assert.equal((await onLedger(done.body.receipt)).type, 'approval.denied')
  })

  it('expires unanswered, which is a refusal, receipted as approval.expired', async () => {
    const created = await ask({ action: 'Renew my insurance', expires_in: 60 })
    assert.equal(created.body.expires_in, 60)
    // time passes: the deadline moves into the past
    const db = service.ctx.database!.db as Kysely<IdpTables>
    await db
      .updateTable('approvals')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', created.body.approval_id)
      .execute()
    const done = await poll(created.body.approval_id)
    assert.equal(done.body.status, 'expired')
    assert.equal((await onLedger(done.body.receipt)).type, 'approval.expired')
    assert.equal((await answer(created.body.approval_id, 'approve')).status, 409, 'too late to approve')
  })

  it('refuses bad requests, other clients and other users, changing nothing', async () => {
    const refused = async (res: Promise<Answer>, status: number, error: string) => {
      const answered = await res
      assert.equal(answered.status, status, JSON.stringify(answered.body))
      assert.equal(answered.body.error, error)
    }
    await refused(ask({ action: 'x'.repeat(301) }), 400, 'invalid_request')
    await refused(ask({ action: '' }), 400, 'invalid_request')
    const thirteen = Object.fromEntries([...'abcdefghijklm'].map((k) => [k, 1]))
    await refused(ask({ action: 'Too much detail', detail: thirteen }), 400, 'invalid_request')
    await refused(ask({ action: 'Nested', detail: { payee: { name: 'x' } } }), 400, 'invalid_request')
    await refused(ask({ action: 'Too short', expires_in: 59 }), 400, 'invalid_request')
    await refused(ask({ action: 'Too long', expires_in: 86_401 }), 400, 'invalid_request')
    await refused(ask({ ...ASK }, 'not-a-token'), 401, 'invalid_token')
    await refused(ask({ ...ASK }, accessToken, other), 401, 'invalid_token')
    await refused(
      answerOf(
        request(`${service.url}/approvals`, {
          method: 'POST',
          headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ...ASK, client_id: assistant.clientId, client_secret: 'wrong' }),
        }),
      ),
      401,
      'invalid_client',
    )
    await refused(answerOf(request(`${service.url}/approvals/apr_x`)), 401, 'invalid_client')
    const { approval_id } = (await ask(ASK)).body
    await refused(poll(approval_id, other), 404, 'not_found')
    await refused(poll('apr_unknown'), 404, 'not_found')

    // the page is for the signed-in user it asks; a form without the CSRF token changes nothing
    const stranger = await new CookieJar().fetch(`${service.url}/ui/approvals/${approval_id}`)
    assert.equal(stranger.status, 303)
    assert.match(stranger.headers.get('location')!, /^\/ui\/login\?return_to=/)
    const forged = await jar.fetch(`${service.url}/ui/approvals/${approval_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: 'forged', decision: 'approve' }).toString(),
    })
    assert.equal(forged.status, 403)
    assert.equal((await pollAfterInterval(approval_id)).body.status, 'pending')
  })
})
