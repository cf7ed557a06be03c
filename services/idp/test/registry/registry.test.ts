import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { RunningService } from '@svc/kit'
import { request } from '@svc/kit/testing'
import { verifyEddsaJcs2022Proof } from '@svc/trust/data-integrity'
import type { LedgerConfig } from '../../../ledger/src/config.ts'
import type { IdpConfig } from '../../src/config.ts'
import { idpWithLedger, receiptsAbout } from '@svc/testing/ledger'
import { asOrg, signUpOrg } from '@svc/testing/idp-orgs'

const WRITER = 'test-idp-writer-token-0005'

describe('the agent registry: profile, ERC-8004 registration file, AgentCV and page', () => {
  let log: RunningService<LedgerConfig>
  let service: RunningService<IdpConfig>
  let shopper: { did: string; client_id: string }
  let idle: { did: string }
  let ledgerClosed = false

  before(async () => {
    ;({ log, service } = await idpWithLedger(WRITER, { IDP_REGISTRY_RATE_PER_MIN: '40' }))
    const org = asOrg(service, (await signUpOrg(service, 'Shop')).api_key)
    const agent = (name: string) =>
      org('POST', '/orgs/clients', {
        client_name: name,
        client_type: 'confidential',
        redirect_uris: ['https://shop.example.com/callback'],
      })
    shopper = (await agent('Shopper')).body as typeof shopper
    idle = (await agent('Idle')).body as typeof idle
    await org('PUT', `/orgs/clients/${shopper.client_id}/agent-model`, { model: 'gpt-5', provider: 'OpenAI' })
    // the organization screens its agent: a kya.screening receipt about the agent's DID
    await org('POST', '/orgs/agents/screen', { did: shopper.did })
    await receiptsAbout({ url: log.url, writer: WRITER }, shopper.did, (r) => r.length >= 1)
  })
  after(async () => {
    await service.close()
    if (!ledgerClosed) await log.close()
  })

  const get = (path: string) => request(`${service.url}${path}`)

  it('profiles the agent: registered facts beside its ledger history', async () => {
    const res = await get(`/agents/${shopper.did}/profile.json`)
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('cache-control'), 'public, max-age=60')
    const profile = res.body
    assert.equal(profile.name, 'Shopper')
    assert.deepEqual(profile.agent, { model: 'gpt-5', provider: 'OpenAI', declared_by: 'operator' })
    assert.equal((profile.organization as { name: string }).name, 'Shop')
    const ledger = profile.ledger as { reachable: boolean; receipts: number; types: Record<string, number> }
    assert.equal(ledger.reachable, true)
    assert.deepEqual(ledger.types, { 'kya.screening': 1 })
    assert.deepEqual(profile.trust, {
      registered: true,
      organization: true,
      domain_verified: false,
      workload_bound: false,
      model_declared: true,
      ledger_receipts: 1,
    })
  })

  it('serves the ERC-8004 registration file and a signed AgentCV', async () => {
    const file = (await get(`/agents/${shopper.did}/erc8004.json`)).body
    assert.equal(file.type, 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1')
    assert.equal(file.name, 'Shopper')
    assert.match(file.image as string, /^data:image\/svg\+xml;base64,/)
    assert.deepEqual((file.services as Array<{ name: string; endpoint: string }>)[0], {
      name: 'A2A',
      endpoint: 'https://shop.example.com/.well-known/agent-card.json',
      version: '1.0',
    })
    assert.deepEqual(file.registrations, [], 'not registered on any chain')
    assert.equal(file.active, true)
    assert.deepEqual(file.supportedTrust, ['reputation'])

    const cv = (await get(`/agents/${shopper.did}/cv.json`)).body
    assert.equal(cv.subject, shopper.did)
    const issuer = (await get('/.well-known/svc-issuer.json')).body
    const check = verifyEddsaJcs2022Proof(cv)
    assert.ok(check.verified, check.error)
    assert.ok(
      (cv.proof as { verificationMethod: string }).verificationMethod.startsWith(`${issuer.did as string}#`),
    )
  })

  it('shows a page, and says 404 for a DID it does not know and 400 for one that is not a DID', async () => {
    const page = await fetch(`${service.url}/agents/${shopper.did}`)
    assert.equal(page.status, 200)
    assert.match(await page.text(), /<h1>Shopper<\/h1>/)
    const unknown = await get('/agents/did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK/profile.json')
    assert.equal(unknown.status, 404)
    assert.equal(unknown.body.error, 'not_found')
    assert.equal((await get('/agents/not-a-did/profile.json')).status, 400)
  })

  it('answers with ledger.reachable false while the ledger is down, never an error', async () => {
    await log.close()
    const res = await get(`/agents/${idle.did}/profile.json`)
    assert.equal(res.status, 200)
    assert.equal((res.body.ledger as { reachable: boolean }).reachable, false)
    assert.equal((res.body.trust as { ledger_receipts: null }).ledger_receipts, null)
    ledgerClosed = true
  })

  it('limits each IP to its rate a minute', async () => {
    let limited = 0
    for (let i = 0; i < 90 && !limited; i++)
      if ((await get(`/agents/${shopper.did}/erc8004.json`)).status === 429) limited = i
    assert.ok(limited >= 20, `refused after ${limited}`)
  })
})
