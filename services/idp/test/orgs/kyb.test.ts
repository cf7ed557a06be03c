import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { asOrg, signUpOrg } from '@svc/testing/idp-orgs'
import { ADMIN } from '@svc/testing/idp-flow'

describe('business verification: attestation, owner document, two-way check', () => {
  let service: RunningService<IdpConfig>
  let web: Server
  /** What each domain publishes at its owner document URL. */
  const published = new Map<string, unknown>()
  let key: string

  const orgCall = (method: string, path: string, body?: unknown, apiKey = key) =>
    asOrg(service, apiKey)(method, path, body)
  const signUp = async (name: string) => (await signUpOrg(service, name)).api_key
  before(async () => {
    web = createServer((req, res) => {
      const domain = decodeURIComponent(req.url!.split('/')[1]!)
      const document = published.get(domain)
      if (!document) res.writeHead(404).end()
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document))
    })
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
    service = await startService(
      idp,
      testEnv({
        IDP_ADMIN_TOKEN: ADMIN,
        IDP_FETCH_ALLOW_PRIVATE: 'true',
        // each domain's document is served by the local server, under the domain's name
        IDP_OWNER_DOCUMENT_URL: `http://127.0.0.1:${(web.address() as AddressInfo).port}/{domain}/svc-owner.json`,
      }),
      { fresh: true },
    )
    key = await signUp('acme')
  })
  after(async () => {
    await service.close()
    web.close()
  })

  it('attests the declaration and verifies the domain once it publishes the owner document', async () => {
    const declared = await orgCall('POST', '/orgs/kyb', {
      domain: 'Acme.example.com',
      entity_name: 'Acme Trading Ltd',
      jurisdiction: 'GB',
      registration: '01234567',
    })
    assert.equal(declared.status, 200, JSON.stringify(declared.body))
    const me = (await orgCall('GET', '/orgs/me')).body
    assert.equal(me.domain, 'acme.example.com')
    assert.equal(me.domain_verified, false)
    const { payload, protectedHeader } = await jwtVerify(
      declared.body.attestation as string,
      createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`)),
      { issuer: service.url, typ: 'svc-kyb+jwt' },
    )
    assert.equal(protectedHeader.typ, 'svc-kyb+jwt')
    assert.equal(payload.sub, me.did)
    assert.equal(payload.entity_name, 'Acme Trading Ltd')
    assert.match(declared.body.publish_at as string, /acme\.example\.com\/svc-owner\.json$/)

    const notYet = await orgCall('POST', '/orgs/kyb/check')
    assert.equal(notYet.body.verified, false)
    assert.match((notYet.body.problems as string[])[0]!, /answered 404/)

    // a document naming another organization does not verify
    published.set('acme.example.com', {
      ...(declared.body.owner_document as object),
      did: 'did:key:z6MkOther',
    })
    assert.deepEqual((await orgCall('POST', '/orgs/kyb/check')).body.problems, [
      'the owner document names another DID',
    ])

    published.set('acme.example.com', declared.body.owner_document)
    const checked = await orgCall('POST', '/orgs/kyb/check')
    assert.deepEqual(
      { verified: checked.body.verified, problems: checked.body.problems },
      { verified: true, problems: [] },
    )
    assert.equal((await orgCall('GET', '/orgs/me')).body.domain_verified, true)
  })

  it('will not let another organization borrow a verified domain’s document', async () => {
    const rival = await signUp('rival')
    await orgCall('POST', '/orgs/kyb', { domain: 'acme.example.com', entity_name: 'Not Acme' }, rival)
    const checked = await orgCall('POST', '/orgs/kyb/check', undefined, rival)
    assert.equal(checked.body.verified, false)
    assert.ok((checked.body.problems as string[]).includes('the owner document names another organization'))
    assert.equal(
      (await orgCall('POST', '/orgs/kyb', { domain: 'not a domain', entity_name: 'x' }, rival)).status,
      400,
    )
  })
})
