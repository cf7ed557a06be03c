import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, type JsonResponse, request, testEnv } from '@svc/kit/testing'
import { ledger } from '../../../ledger/src/app.ts'
import type { LedgerConfig } from '../../../ledger/src/config.ts'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'
import { startReceiver } from '../support/receiver.ts'

const CALLBACK = 'https://rental.example.com/callback'
const IDP_WRITER = 'test-idp-writer-token-0004'
const RENTAL_WRITER = 'test-rental-writer-token-0004'

describe('inbound activity: a client relays ledger receipts about its users', () => {
  let log: RunningService<LedgerConfig>
  let service: RunningService<IdpConfig>
  let hook: Awaited<ReturnType<typeof startReceiver>>
  let rental: Awaited<ReturnType<typeof registerClient>>
  let webhookSecret: string
  let sub: string
  const jar = new CookieJar()

  /** What the client does: the exact bytes it sends are the ones it signs. */
  const relay = (raw: string, secret = webhookSecret, clientId = rental.clientId) =>
    request(`${service.url}/webhooks/svc/${clientId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-svc-signature': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`,
      },
      body: raw,
    })
  const withTag = (event: string, tag: string) => JSON.stringify({ ...JSON.parse(event), subject_tag: tag })
  const expect = (res: JsonResponse, status: number, body: Record<string, unknown>) => {
    assert.equal(res.status, status, JSON.stringify(res.body))
    for (const [k, v] of Object.entries(body)) assert.equal(res.body[k], v)
  }

  before(async () => {
    hook = await startReceiver(200)
    log = await startService(
      ledger,
      testEnv({ LEDGER_WRITERS: `idp:${IDP_WRITER},rental:${RENTAL_WRITER}`, LEDGER_BATCH_WAIT_MS: '2' }),
      { fresh: true },
    )
    // the client is also a ledger writer, subscribed to receipt.recorded
    await request(`${log.url}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${RENTAL_WRITER}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: hook.url,
        events: ['receipt.recorded'],
      }),
    })
    service = await startService(
      idp,
      testEnv({
        IDP_ADMIN_TOKEN: ADMIN,
        IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
        IDP_TOKEN_RATE_PER_MIN_IP: '0',
        IDP_LEDGER_TOKEN: IDP_WRITER,
        LEDGER_URL: log.url,
      }),
      { fresh: true },
    )
    rental = await registerClient(service, {
      client_name: 'Rental',
      first_party: false,
      redirect_uris: [CALLBACK],
    })
    webhookSecret = rental.webhookSecret
    // the demo user's first sign-in is receipted (login.new_device) with the account's DID as subject
    const tokens = await browser(service, rental.config, CALLBACK, {
      jar,
      consent: { decision: 'approve', scopes: ['email'] },
    }).signIn()
    sub = tokens.claims()!.sub
  })
  after(async () => {
    await service.close()
    await log.close()
    await hook.close()
  })

  /** The ledger's receipt.recorded event of the sign-in's login.new_device (receipts arrive in any order). */
  const ledgerEvent = async () => {
    for (let count = 1; ; count++) {
      const found = (await hook.arrived(count))
        .map((delivery) => delivery.body)
        .find(
          (body) =>
            (JSON.parse(body) as { data: { receipt: { type: string } } }).data.receipt.type ===
            'login.new_device',
        )
      if (found) return found
    }
  }

  it('stores a relayed receipt once for the user it is about, who sees it on the account page', async () => {
    const event = await ledgerEvent()
    expect(await relay(withTag(event, sub)), 202, { status: 'accepted' })
    expect(await relay(withTag(event, sub)), 202, { status: 'duplicate' })
    const account = await (await jar.fetch(`${service.url}/ui/account`)).text()
    assert.match(account, /<td>Rental<\/td>\s*<td>login\.new_device<\/td>/)
  })

  it('ignores other events and tags that are not the user’s', async () => {
    const event = await ledgerEvent()
    expect(await relay(withTag(event, 'someone-else')), 202, { status: 'ignored' })
    expect(
      await relay(JSON.stringify({ ...JSON.parse(event), type: 'receipt.deleted', subject_tag: sub })),
      202,
      {
        status: 'ignored',
      },
    )
  })

  it('refuses bad signatures (even of a re-serialised body), malformed bodies and unknown clients', async () => {
    const event = await ledgerEvent()
    const raw = withTag(event, sub)
    expect(await relay(raw, 'not-the-secret'), 403, { error: 'access_denied' })
    // a careless client signs one serialisation and sends another: the bytes differ, so it fails
    const careless = await request(`${service.url}/webhooks/svc/${rental.clientId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-svc-signature': `sha256=${createHmac('sha256', webhookSecret).update(raw).digest('hex')}`,
      },
      body: JSON.stringify(JSON.parse(raw), null, 2),
    })
    expect(careless, 403, { error: 'access_denied' })
    expect(await relay('{not json'), 400, { error: 'invalid_request' })
    const parsed = JSON.parse(raw) as { data: Record<string, unknown> }
    expect(await relay(JSON.stringify({ ...parsed, subject_tag: undefined })), 400, {
      error: 'invalid_request',
    })
    expect(await relay(JSON.stringify({ ...parsed, data: { ...parsed.data, hash: undefined } })), 400, {
      error: 'invalid_request',
    })
    const forged = {
      ...parsed,
      data: {
        ...parsed.data,
        hash: parsed.data.hash,
        receipt: { ...(parsed.data.receipt as object), type: 'consent.granted' },
      },
    }
    expect(await relay(JSON.stringify(forged)), 400, { error: 'invalid_request' })
    expect(await relay(raw, webhookSecret, 'cli_unknown'), 404, { error: 'not_found' })
  })
})
