import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { type JsonResponse, request, testEnv } from '@svc/kit/testing'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, createClient, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://shop.example.com/callback'

/** Addresses a caller-given URL must never reach in production: private, loopback, metadata, and IPv6 forms carrying them. */
const REFUSED = [
  'https://169.254.169.254/latest/meta-data/',
  'https://10.0.0.1/admin',
  'https://[fd00::1]/x',
  'http://127.0.0.1:6379/',
  'http://localhost:6379/',
  'https://localhost/x',
  'https://[::1]/x',
  'https://[::127.0.0.1]/x',
  'https://[::ffff:7f00:1]/x',
  'https://[64:ff9b::a9fe:a9fe]/latest',
  'https://[64:ff9b:1::a00:1]/x',
  'https://[2002:a9fe:a9fe::1]/latest',
  'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x',
  'https://[fd00:ec2::254]/latest',
  'https://100.100.100.200/latest',
  'https://0x7f.1/x',
]

const refusedWith = (res: JsonResponse, code: string, field: string) => {
  assert.equal(res.status, 400, JSON.stringify(res.body))
  assert.equal(res.body.error, code)
  assert.match(
    String(res.body.error_description),
    new RegExp(`^${field} .*(not a public address|must be https)`),
  )
}

describe('outbound guard: caller-given URLs refused at save (private addresses not allowed)', () => {
  let service: RunningService<IdpConfig>
  let key: string
  let client: { client_id: string; client_secret: string }

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_FETCH_ALLOW_PRIVATE: 'false', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    const signed = await request(`${service.url}/orgs/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Shop', contact_email: 'ops@shop.example.com', accept_terms: true }),
    })
    key = signed.body.api_key as string
    client = (
      await request(`${service.url}/orgs/clients`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Shop', client_type: 'confidential', redirect_uris: [CALLBACK] }),
      })
    ).body as typeof client
  })
  after(() => service.close())

  it('the lifecycle URL: 400 invalid_client_metadata naming the field, nothing saved', async () => {
    for (const url of REFUSED) {
      const res = await request(`${service.url}/orgs/clients/${client.client_id}/lifecycle-url`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ lifecycle_webhook_url: url }),
      })
      refusedWith(res, 'invalid_client_metadata', 'lifecycle_webhook_url')
    }
    const listed = await request(`${service.url}/orgs/clients/${client.client_id}`, {
      headers: { authorization: `Bearer ${key}` },
    })
    assert.equal(listed.body.lifecycle_webhook_url ?? null, null)
    assert.equal(listed.body.backchannel_logout_uri ?? null, null)
  })

  it('the SSF push endpoint: 400 invalid_request naming endpoint_url', async () => {
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`
    for (const url of REFUSED) {
      const res = await request(`${service.url}/ssf/stream`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/json' },
        body: JSON.stringify({ delivery: 'push', endpoint_url: url }),
      })
      refusedWith(res, 'invalid_request', 'endpoint_url')
    }
    const status = await request(`${service.url}/ssf/status`, { headers: { authorization: basic } })
    assert.equal(status.body.status, 'disabled')
  })

  it('the back-channel and front-channel logout URIs and the lifecycle URL of a new client', async () => {
    for (const url of REFUSED)
      for (const field of ['backchannel_logout_uri', 'frontchannel_logout_uri', 'lifecycle_webhook_url']) {
        const res = await createClient(service, { redirect_uris: [CALLBACK], [field]: url })
        refusedWith(res, 'invalid_client_metadata', field)
      }
    const org = await request(`${service.url}/orgs/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Shop 2',
        client_type: 'confidential',
        redirect_uris: [CALLBACK],
        backchannel_logout_uri: 'https://169.254.169.254/latest/meta-data/',
      }),
    })
    refusedWith(org, 'invalid_client_metadata', 'backchannel_logout_uri')
  })
})

describe('outbound guard: at delivery, with private addresses allowed (development)', () => {
  let service: RunningService<IdpConfig>
  let receiver: Server
  const hits: string[] = []

  before(async () => {
    // a relying party's back-channel endpoint that answers with a redirect to a private address
    receiver = createServer((req, res) => {
      hits.push(req.url ?? '')
      req.resume()
      req.on('end', () => {
        if (req.url === '/backchannel')
          res.writeHead(307, { location: `http://127.0.0.1:${port()}/internal-admin` }).end()
        else res.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
  })
  const port = () => (receiver.address() as AddressInfo).port
  after(async () => {
    await service.close()
    await new Promise((resolve) => receiver.close(resolve))
  })

  it('a metadata address is refused at save even here', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/latest',
      'http://[::ffff:a9fe:a9fe]/latest',
      'http://100.100.100.200/latest',
    ]) {
      const res = await createClient(service, { redirect_uris: [CALLBACK], backchannel_logout_uri: url })
      refusedWith(res, 'invalid_client_metadata', 'backchannel_logout_uri')
      assert.match(String(res.body.error_description), /cloud metadata/)
    }
  })

  it('a back-channel logout answered with a redirect: not followed, the private target never reached', async () => {
    const callback = `http://127.0.0.1:${port()}/callback`
    const { config } = await registerClient(service, {
      redirect_uris: [callback],
      backchannel_logout_uri: `http://127.0.0.1:${port()}/backchannel`,
    })
    const user = browser(service, config, callback)
    const tokens = await user.signIn()
    const res = await user.jar.fetch(
      `${service.url}/logout?${new URLSearchParams({ id_token_hint: tokens.id_token! })}`,
    )
    assert.equal(res.status, 200)
    // the first attempt and a retry (2 s later) reach the endpoint; neither follows its redirect
    const deadline = Date.now() + 20_000
    while (hits.filter((h) => h === '/backchannel').length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100))
    assert.ok(hits.filter((h) => h === '/backchannel').length >= 2, JSON.stringify(hits))
    assert.ok(!hits.includes('/internal-admin'), 'the redirect was followed')
  })
})
