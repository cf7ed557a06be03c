import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { appliedMigrations, request, testEnv } from '@svc/kit/testing'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'

const ADMIN_TOKEN = 'test-admin-token-0123456789'

describe('idp service', () => {
  let service: RunningService<IdpConfig>
  before(async () => {
    service = await startService(idp, testEnv({ IDP_ADMIN_TOKEN: ADMIN_TOKEN }), { fresh: true })
  })
  after(async () => service.close())

  it('reports its components on /healthz and is ready', async () => {
    const health = await request(`${service.url}/healthz`)
    assert.equal(health.status, 200)
    assert.deepEqual(health.body, {
      status: 'ok',
      db: 'ok',
      redis: process.env.REDIS_URL ? 'ok' : 'not_configured',
    })
    assert.equal((await request(`${service.url}/readyz`)).status, 200)
  })

  it('has applied its migrations', async () => {
    assert.deepEqual(await appliedMigrations(service.ctx.database!), [
      '0001_signing_keys.sql',
      '0002_keys_and_clients.sql',
      '0003_accounts.sql',
      '0004_authorization_codes.sql',
      '0005_refresh_tokens.sql',
      '0006_consents.sql',
      '0007_email.sql',
      '0008_totp.sql',
      '0009_identities_devices_receipts.sql',
      '0010_passkeys.sql',
      '0011_resources.sql',
      '0012_pushed_requests.sql',
      '0013_private_key_jwt.sql',
      '0014_dpop.sql',
      '0015_device_codes.sql',
      '0016_task_grants.sql',
      '0017_approvals.sql',
      '0018_code_dpop_binding.sql',
      '0019_organizations.sql',
      '0020_org_members.sql',
      '0021_lifecycle.sql',
      '0022_shared_signals.sql',
      '0023_inbound_activity.sql',
      '0024_agent_clients.sql',
      '0025_kyb.sql',
      '0026_user_disable.sql',
      '0027_operating_documents.sql',
      '0028_witness.sql',
      '0029_credential_offers.sql',
      '0030_retention.sql',
      '0031_code_access_token.sql',
      '0032_client_uri.sql',
    ])
  })

  it('publishes its OpenAPI document', async () => {
    const doc = await request(`${service.url}/openapi.json`)
    assert.equal(doc.status, 200)
    assert.equal(doc.body.openapi, '3.1.0')
    assert.equal((doc.body.info as { title: string }).title, 'idp')
  })

  it('guards /metrics with the admin token, compared in constant time', async () => {
    const missing = await request(`${service.url}/metrics`)
    assert.equal(missing.status, 401)
    assert.equal(missing.body.error, 'invalid_token')
    const wrong = await request(`${service.url}/metrics`, { headers: { 'x-admin-token': 'not-the-token' } })
    assert.equal(wrong.status, 401)
    const right = await fetch(`${service.url}/metrics`, { headers: { 'x-admin-token': ADMIN_TOKEN } })
    assert.equal(right.status, 200)
    assert.match(await right.text(), /process_cpu_seconds_total\{service="idp"\}/)
  })

  it('answers errors in the RFC 6749 shape', async () => {
    const res = await request(`${service.url}/no-such-endpoint`)
    assert.equal(res.status, 404)
    assert.equal(res.body.error, 'not_found')
    assert.equal(typeof res.body.error_description, 'string')
  })

  it('answers /healthz 503 degraded naming the database when it fails', async () => {
    const other = await startService(idp, testEnv({ IDP_ADMIN_TOKEN: ADMIN_TOKEN }), { fresh: true })
    await other.ctx.database!.close()
    const health = await request(`${other.url}/healthz`)
    assert.equal(health.status, 503)
    assert.equal(health.body.status, 'degraded')
    assert.equal(health.body.db, 'down')
    assert.deepEqual(health.body.failing, ['db'])
    await other.close()
  })
})
