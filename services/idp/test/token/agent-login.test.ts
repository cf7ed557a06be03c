import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import * as oauth from 'oauth4webapi'
import * as oidc from 'openid-client'
import { ledger } from '../../../ledger/src/app.ts'
import type { LedgerConfig } from '../../../ledger/src/config.ts'
import type { IdpConfig } from '../../src/config.ts'
import { idpWithLedger, receiptsAbout } from '@svc/testing/ledger'
import { ADMIN } from '@svc/testing/idp-flow'

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token'
const WRITER = 'test-idp-writer-token-0003'

interface Org {
  organization_id: string
  api_key: string
  did: string
  client: { client_id: string; config: oidc.Configuration }
}

describe('agent-to-agent login: token exchange between organizations, screened both ways', () => {
  let log: RunningService<LedgerConfig>
  let service: RunningService<IdpConfig>
  let as: oauth.AuthorizationServer
  let buyer: Org
  let seller: Org

  const orgCall = (method: string, path: string, key: string, body?: unknown) =>
    request(`${service.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })

  async function organization(name: string): Promise<Org> {
    const signed = await request(`${service.url}/orgs/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, contact_email: `ops@${name}.example.com`, accept_terms: true }),
    })
    const key = signed.body.api_key as string
    const me = await orgCall('GET', '/orgs/me', key)
    const created = await orgCall('POST', '/orgs/clients', key, {
      client_name: `${name} agent`,
      client_type: 'confidential',
      redirect_uris: [`https://${name}.example.com/callback`],
    })
    const { client_id, client_secret } = created.body as { client_id: string; client_secret: string }
    const config = await oidc.discovery(
      new URL(service.url),
      client_id,
      client_secret,
      oidc.ClientSecretBasic(client_secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    )
    return {
      organization_id: signed.body.organization_id as string,
      api_key: key,
      did: me.body.did as string,
      client: { client_id, config },
    }
  }

  /** The ledger's receipts about a subject, once `count` have arrived. */
  const onLedger = (subject: string, count: number) =>
    receiptsAbout({ url: log.url, writer: WRITER }, subject, (r) => r.length >= count)

  const login = async (from: Org, audience: string, extra: Record<string, string> = {}) => {
    const own = await oidc.clientCredentialsGrant(from.client.config, { scope: 'orders:read orders:write' })
    return oidc.genericGrantRequest(from.client.config, TOKEN_EXCHANGE, {
      subject_token: own.access_token,
      subject_token_type: ACCESS_TOKEN,
      audience,
      ...extra,
    })
  }
  const refusal = async (work: Promise<unknown>) => {
    try {
      await work
    } catch (err) {
      return `${(err as { error?: string }).error}: ${(err as { error_description?: string }).error_description}`
    }
    throw new Error('not refused')
  }

  before(async () => {
    ;({ log, service } = await idpWithLedger(WRITER))
    as = await oauth.processDiscoveryResponse(
      new URL(service.url),
      await oauth.discoveryRequest(new URL(service.url), { [oauth.allowInsecureRequests]: true }),
    )
    buyer = await organization('buyer')
    seller = await organization('seller')
  })
  after(async () => {
    await service.close()
    await log.close()
  })

  it('gives the requester a token for the other organization’s agent, with kya and both screenings receipted', async () => {
    const answer = await login(buyer, seller.client.client_id, { scope: 'orders:read' })
    assert.equal(answer.issued_token_type, ACCESS_TOKEN)
    assert.equal(answer.refresh_token, undefined)
    assert.equal(answer.scope, 'orders:read')
    const claims = await oauth.validateJwtAccessToken(
      as,
      new Request(`${service.url}/orders`, { headers: { authorization: `Bearer ${answer.access_token}` } }),
      seller.client.client_id,
      { [oauth.allowInsecureRequests]: true },
    )
    assert.equal(claims.sub, buyer.client.client_id)
    assert.equal(claims.act, undefined)
    assert.equal(claims.sid, undefined)
    const kya = claims.kya as { ok: boolean; screened: string[]; mutual: boolean }
    assert.equal(kya.ok, true)
    assert.equal(kya.mutual, true)
    assert.equal(kya.screened.length, 2)
    const info = await oidc.tokenIntrospection(seller.client.config, answer.access_token)
    assert.deepEqual(info.kya, kya)

    // the seller screened the buyer's agent, and the buyer the seller's: both on the ledger
    const [aboutBuyer] = await onLedger(buyer.did, 1)
    assert.equal(aboutBuyer!.receipt.type, 'kya.screening')
    assert.equal(aboutBuyer!.leaf_hash, kya.screened[0])
    assert.deepEqual(aboutBuyer!.receipt.data, {
      screened_by: seller.did,
      ok: true,
      hits: [],
      owner: buyer.organization_id,
      client_id: buyer.client.client_id,
    })
    const [aboutSeller] = await onLedger(seller.did, 1)
    assert.equal(aboutSeller!.leaf_hash, kya.screened[1])
    assert.equal(aboutSeller!.receipt.data.screened_by, buyer.did)
  })

  it('is refused when either side’s deny list names the other, and says which side', async () => {
    await orgCall('PATCH', '/orgs/me', seller.api_key, { agent_deny_list: [buyer.client.client_id] })
    assert.match(
      await refusal(login(buyer, seller.client.client_id)),
      /^invalid_grant: the audience’s organization refuses/,
    )
    await orgCall('PATCH', '/orgs/me', seller.api_key, { agent_deny_list: [] })
    await orgCall('PATCH', '/orgs/me', buyer.api_key, { agent_deny_list: [seller.did] })
    assert.match(
      await refusal(login(buyer, seller.client.client_id)),
      /^invalid_grant: this agent’s organization refuses/,
    )
    await orgCall('PATCH', '/orgs/me', buyer.api_key, { agent_deny_list: [] })
    const refused = (await onLedger(buyer.did, 2)).find((r) => r.receipt.data.ok === false)!
    assert.deepEqual(refused.receipt.data.hits, [buyer.client.client_id])
  })

  it('refuses another’s token, its own organization, a platform client and a wider scope', async () => {
    const sellerToken = await oidc.clientCredentialsGrant(seller.client.config, {})
    assert.match(
      await refusal(
        oidc.genericGrantRequest(buyer.client.config, TOKEN_EXCHANGE, {
          subject_token: sellerToken.access_token,
          subject_token_type: ACCESS_TOKEN,
          audience: seller.client.client_id,
        }),
      ),
      /^invalid_grant/,
    )
    const sibling = await orgCall('POST', '/orgs/clients', buyer.api_key, {
      client_name: 'Sibling',
      client_type: 'confidential',
      redirect_uris: ['https://buyer.example.com/other'],
    })
    assert.match(await refusal(login(buyer, sibling.body.client_id as string)), /^invalid_target/)
    const platform = await request(`${service.url}/manage/v1/clients`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Console',
        client_type: 'confidential',
        redirect_uris: ['https://console.example.com/cb'],
      }),
    })
    assert.match(await refusal(login(buyer, platform.body.client_id as string)), /^invalid_target/)
    assert.match(await refusal(login(buyer, seller.client.client_id, { scope: 'admin' })), /^invalid_scope/)
  })

  it('screens an agent on request, with its ledger history, and says when the ledger is down', async () => {
    const screened = await orgCall('POST', '/orgs/agents/screen', seller.api_key, {
      did: buyer.did,
      owner: 'buyer.example.com',
    })
    assert.equal(screened.status, 200)
    assert.equal(screened.body.ok, true)
    assert.deepEqual(screened.body.hits, [])
    assert.equal(screened.body.history_error, null)
    const history = screened.body.history as Array<{ type: string }>
    assert.ok(history.length >= 2 && history.every((h) => h.type === 'kya.screening'))
    assert.match(screened.body.receipt as string, /^[A-Za-z0-9+/]{43}=$/)

    await orgCall('PATCH', '/orgs/me', seller.api_key, { agent_deny_list: ['buyer.example.com'] })
    const denied = await orgCall('POST', '/orgs/agents/screen', seller.api_key, {
      did: buyer.did,
      owner: 'buyer.example.com',
    })
    assert.equal(denied.body.ok, false)
    assert.deepEqual(denied.body.hits, ['buyer.example.com'])
    const bad = await orgCall('POST', '/orgs/agents/screen', seller.api_key, { did: 'not a did' })
    assert.equal(bad.status, 400)

    await log.close()
    const offline = await orgCall('POST', '/orgs/agents/screen', seller.api_key, { did: buyer.did })
    assert.equal(offline.status, 200)
    assert.deepEqual(offline.body.history, [])
    assert.match(offline.body.history_error as string, /ledger/)
    log = await startService(ledger, testEnv({ LEDGER_WRITERS: `idp:${WRITER}` }), { fresh: true })
  })
})
