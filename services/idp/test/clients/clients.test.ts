import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type RunningService, Sealer, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import type { Kysely } from 'kysely'
import { idp } from '../../src/app.ts'
import { verifyClientSecret, webhookSecretOf } from '../../src/areas/clients/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import type { IdpTables } from '../../src/db.ts'

const ADMIN = 'test-admin-token-0123456789'
const json = { 'x-admin-token': ADMIN, 'content-type': 'application/json' }

describe('idp clients management', () => {
  let service: RunningService<IdpConfig>
  let db: Kysely<IdpTables>
  let sealer: Sealer
  const create = (body: Record<string, unknown>, headers: Record<string, string> = json) =>
    request(`${service.url}/manage/v1/clients`, { method: 'POST', headers, body: JSON.stringify(body) })
  const confidential = {
    client_name: 'Rental console',
    client_type: 'confidential',
    first_party: true,
    redirect_uris: ['https://rental.example.com/auth/callback', 'http://127.0.0.1:4200/auth/callback'],
    post_logout_redirect_uris: ['https://rental.example.com/'],
    allowed_origins: ['https://rental.example.com'],
    backchannel_logout_uri: 'https://rental.example.com/auth/backchannel',
  }

  const clientCredentials = (clientId: string, secret: string) =>
    request(`${service.url}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    })

  before(async () => {
    service = await startService(idp, testEnv({ IDP_ADMIN_TOKEN: ADMIN }), { fresh: true })
    db = service.ctx.database!.db as Kysely<IdpTables>
    sealer = new Sealer(service.ctx.config.encryptionKey)
  })
  after(async () => service.close())

  it('registers a confidential client, showing its secrets once and keeping them hashed or sealed', async () => {
    const res = await create(confidential)
    assert.equal(res.status, 201)
    const client = res.body as Record<string, unknown>
    assert.match(client.client_id as string, /^cli_/)
    assert.match(client.client_secret as string, /^cs_[A-Za-z0-9_-]{43}$/)
    assert.match(client.webhook_secret as string, /^whsec_[A-Za-z0-9_-]{43}$/)
    assert.equal(client.token_endpoint_auth_method, 'client_secret_basic')
    assert.equal(client.subject_type, 'public', 'first-party clients get public subjects')
    assert.equal(client.require_pkce, true)
    assert.equal(client.client_secret_expires_at, 0)

    const fetched = await request(`${service.url}/manage/v1/clients/${client.client_id}`, { headers: json })
    assert.equal(fetched.status, 200)
    assert.equal(fetched.body.client_secret, undefined)
    assert.equal(fetched.body.webhook_secret, undefined)
    assert.deepEqual(fetched.body.redirect_uris, confidential.redirect_uris)

    const row = await db
      .selectFrom('clients')
      .selectAll()
      .where('client_id', '=', client.client_id as string)
      .executeTakeFirstOrThrow()
    assert.deepEqual(
      row.client_secret_hash,
      createHash('sha256')
        .update(client.client_secret as string)
        .digest(),
    )
    assert.ok(!row.webhook_secret_sealed.includes(Buffer.from(client.webhook_secret as string)))
    assert.equal(
      await verifyClientSecret(db, client.client_id as string, client.client_secret as string),
      true,
    )
    assert.equal(await verifyClientSecret(db, client.client_id as string, 'cs_wrong'), false)
    assert.equal(await webhookSecretOf(db, sealer, client.client_id as string), client.webhook_secret)
  })

  it('rotates the client secret and the webhook secret; the old ones stop working at once', async () => {
    const client = (await create(confidential)).body as Record<string, string>
    const rotated = await request(`${service.url}/manage/v1/clients/${client.client_id}/rotate-secret`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN },
    })
    assert.equal(rotated.status, 200)
    assert.notEqual(rotated.body.client_secret, client.client_secret)
    assert.equal(await verifyClientSecret(db, client.client_id!, client.client_secret!), false)
    assert.equal(await verifyClientSecret(db, client.client_id!, rotated.body.client_secret as string), true)

    const webhook = await request(
      `${service.url}/manage/v1/clients/${client.client_id}/rotate-webhook-secret`,
      {
        method: 'POST',
        headers: { 'x-admin-token': ADMIN },
      },
    )
    assert.equal(webhook.status, 200)
    assert.notEqual(webhook.body.webhook_secret, client.webhook_secret)
    assert.equal(await webhookSecretOf(db, sealer, client.client_id!), webhook.body.webhook_secret)
  })

  it('refuses a rotated secret at /token at once, though it authenticated the request before', async () => {
    const client = (await create(confidential)).body as Record<string, string>
    const grant = (secret: string) => clientCredentials(client.client_id!, secret)
    assert.equal((await grant(client.client_secret!)).status, 200)
    const rotated = await request(`${service.url}/manage/v1/clients/${client.client_id}/rotate-secret`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN },
    })
    const refused = await grant(client.client_secret!)
    assert.equal(refused.status, 401)
    assert.equal(refused.body.error, 'invalid_client')
    assert.equal((await grant(rotated.body.client_secret as string)).status, 200)
  })

  it('accepts at once a secret another instance rotated: a refusal reads the client again', async () => {
    const client = (await create(confidential)).body as Record<string, string>
    const grant = (secret: string) => clientCredentials(client.client_id!, secret)
    assert.equal((await grant(client.client_secret!)).status, 200)
    // what another instance's rotation leaves: a new hash in the row, and nothing said to this one
    await db
      .updateTable('clients')
      .set({ client_secret_hash: createHash('sha256').update('cs_elsewhere').digest() })
      .where('client_id', '=', client.client_id!)
      .execute()
    assert.equal((await grant('cs_elsewhere')).status, 200)
    assert.equal((await grant(client.client_secret!)).status, 401)
  })

  it('registers a public (native) client with no secret, and refuses to rotate one', async () => {
    const res = await create({
      client_name: 'CLI',
      client_type: 'public',
      redirect_uris: ['com.example.cli:/callback', 'http://127.0.0.1/callback'],
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.equal(res.body.client_secret, undefined)
    assert.equal(res.body.token_endpoint_auth_method, 'none')
    assert.equal(res.body.subject_type, 'pairwise', 'third-party clients get pairwise subjects')
    const rotate = await request(`${service.url}/manage/v1/clients/${res.body.client_id}/rotate-secret`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN },
    })
    assert.equal(rotate.status, 400)
    assert.equal(rotate.body.error, 'invalid_request')
  })

  it('registers a client by the name the admin chooses, once (409 conflict after)', async () => {
    const named = {
      client_id: 'svc-cli-test',
      client_name: 'Command line',
      client_type: 'public',
      first_party: true,
      redirect_uris: ['http://127.0.0.1/callback'],
    }
    const res = await create(named)
    assert.equal(res.status, 201, JSON.stringify(res.body))
    assert.equal(res.body.client_id, 'svc-cli-test')
    assert.equal(res.body.subject_type, 'public', 'first-party clients see the user id')
    const again = await create(named)
    assert.equal(again.status, 409)
    assert.equal((await create({ ...named, client_id: 'Not A Name' })).status, 400)
  })

  it('lists clients for the admin only', async () => {
    const list = await request(`${service.url}/manage/v1/clients`, { headers: json })
    assert.equal(list.status, 200)
    assert.ok((list.body.clients as unknown[]).length >= 3)
    for (const c of list.body.clients as Array<Record<string, unknown>>)
      assert.equal(c.client_secret, undefined)
    const denied = await request(`${service.url}/manage/v1/clients`)
    assert.equal(denied.status, 401)
    assert.equal(denied.body.error, 'invalid_token')
    assert.equal(
      (await create(confidential, { 'content-type': 'application/json', 'x-admin-token': 'wrong' })).status,
      401,
    )
    const missing = await request(`${service.url}/manage/v1/clients/cli_nobody`, { headers: json })
    assert.equal(missing.status, 404)
    assert.equal(
      (
        await request(`${service.url}/manage/v1/clients/cli_nobody/rotate-webhook-secret`, {
          method: 'POST',
          headers: { 'x-admin-token': ADMIN },
        })
      ).status,
      404,
    )
  })

  it('keeps a client_uri (RFC 7591 §2), the home the hosted pages link back to, and shows it', async () => {
    const res = await create({ ...confidential, client_uri: 'https://rental.example.com/console' })
    assert.equal(res.status, 201)
    assert.equal(res.body.client_uri, 'https://rental.example.com/console')
    const fetched = await request(`${service.url}/manage/v1/clients/${res.body.client_id}`, { headers: json })
    assert.equal(fetched.body.client_uri, 'https://rental.example.com/console')
    const without = await create(confidential)
    assert.equal(without.body.client_uri, null)
    // http only where private addresses are allowed (development and tests, as here)
    assert.equal((await create({ ...confidential, client_uri: 'http://127.0.0.1:4200/console' })).status, 201)
  })

  it('refuses bad client metadata with the RFC 7591 error codes, registering nothing', async () => {
    const before = (
      (await request(`${service.url}/manage/v1/clients`, { headers: json })).body.clients as unknown[]
    ).length
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...confidential, redirect_uris: ['https://app.example.com/cb#frag'] }, 'invalid_redirect_uri'],
      [{ ...confidential, redirect_uris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri'],
      [{ ...confidential, redirect_uris: ['com.example.app:/cb'] }, 'invalid_redirect_uri'],
      [{ ...confidential, redirect_uris: ['not a uri'] }, 'invalid_redirect_uri'],
      [
        { ...confidential, post_logout_redirect_uris: ['http://evil.example.com/'] },
        'invalid_client_metadata',
      ],
      [{ ...confidential, allowed_origins: ['https://rental.example.com/path'] }, 'invalid_client_metadata'],
      [{ ...confidential, client_uri: 'javascript:alert(1)' }, 'invalid_client_metadata'],
      [{ ...confidential, client_uri: 'https://user:pw@rental.example.com/' }, 'invalid_client_metadata'],
      [{ ...confidential, client_uri: 'https://rental.example.com/#console' }, 'invalid_client_metadata'],
      [{ ...confidential, client_uri: 'not a uri' }, 'invalid_client_metadata'],
      [
        { ...confidential, backchannel_logout_uri: 'http://rental.example.com/bc' },
        'invalid_client_metadata',
      ],
      [{ ...confidential, token_endpoint_auth_method: 'none' }, 'invalid_client_metadata'],
      [
        { ...confidential, client_type: 'public', token_endpoint_auth_method: 'client_secret_post' },
        'invalid_client_metadata',
      ],
      [{ ...confidential, redirect_uris: [] }, 'invalid_request'],
      [{ ...confidential, jwks: { keys: [] } }, 'invalid_request'],
      [{ ...confidential, client_type: 'web' }, 'invalid_request'],
      [{ ...confidential, client_name: 'x'.repeat(201) }, 'invalid_request'],
    ]
    for (const [body, code] of cases) {
      const res = await create(body)
      assert.equal(res.status, 400, JSON.stringify(body))
      assert.equal(res.body.error, code, JSON.stringify(body))
      assert.equal(typeof res.body.error_description, 'string')
    }
    const malformed = await request(`${service.url}/manage/v1/clients`, {
      method: 'POST',
      headers: json,
      body: '{"client_name":',
    })
    assert.equal(malformed.status, 400)
    assert.equal(malformed.body.error, 'invalid_request')
    const after = (
      (await request(`${service.url}/manage/v1/clients`, { headers: json })).body.clients as unknown[]
    ).length
    assert.equal(after, before)
  })
})
