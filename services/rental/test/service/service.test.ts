import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { appliedMigrations, request, testEnv } from '@svc/kit/testing'
import { rental } from '../../src/app.ts'
import type { RentalConfig } from '../../src/config.ts'

describe('rental service', () => {
  let service: RunningService<RentalConfig>
  before(async () => {
    // no idp and no agents service: the rental starts, and says it cannot sign anyone in yet
    service = await startService(
      rental,
      testEnv({
        IDP_URL: 'http://127.0.0.1:9',
        AGENTS_URL: 'http://127.0.0.1:9',
        RENTAL_IDP_ADMIN_TOKEN: 'x'.repeat(20),
      }),
      { fresh: true },
    )
  })
  after(async () => service.close())

  it('is live with its database, and not ready while the idp has not answered', async () => {
    assert.deepEqual((await request(`${service.url}/healthz`)).body, { status: 'ok' })
    const ready = await request(`${service.url}/readyz`)
    assert.equal(ready.status, 503)
    assert.deepEqual(ready.body.checks, {
      db: 'ok',
      redis: process.env.REDIS_URL ? 'ok' : 'not_configured',
      idp: 'down',
    })
  })

  it('answers sign-in with 503 idp_unavailable while the idp has not answered', async () => {
    const res = await request(`${service.url}/auth/login`, { redirect: 'manual' })
    assert.equal(res.status, 503)
    assert.equal((res.body.error as { code: string }).code, 'idp_unavailable')
  })

  it('has applied its migrations', async () => {
    assert.deepEqual(await appliedMigrations(service.ctx.database!), [
      '0001_console_sessions.sql',
      '0002_console.sql',
      '0003_catalogue.sql',
      '0004_api_tokens.sql',
      '0010_rail.sql',
      '0011_engagements.sql',
      '0012_task_cancel.sql',
      '0013_orgs.sql',
      '0014_engagement_config.sql',
      '0015_events.sql',
      '0017_approvals.sql',
      '0018_webhooks.sql',
      '0019_schedules.sql',
      '0020_batches.sql',
      '0021_audit_providers.sql',
      '0022_budgets.sql',
      '0024_invoices.sql',
      '0025_refunds.sql',
      '0026_market.sql',
      '0027_trials.sql',
      '0028_market_external.sql',
      '0029_money.sql',
      '0030_files.sql',
      '0031_ratings_incidents.sql',
      '0032_disputes_insurance.sql',
      '0033_capacity_versions.sql',
      '0034_console_session_id_token.sql',
      '0035_sla.sql',
      '0036_engagement_end.sql',
      '0037_identity_events.sql',
      '0038_sla_credits.sql',
      '0040_retention.sql',
      '0041_step_up_erasure.sql',
      '0042_onboarding_task_files.sql',
      '0043_tenant_api.sql',
      '0044_teams.sql',
      '0045_connect.sql',
      '0046_egress_policy.sql',
      '0047_erase_on_owner_deletion.sql',
      '0048_org_roles_audit_anchors.sql',
      '0049_connect_auth_web.sql',
      '0050_tenant_exports.sql',
      '0051_task_leases.sql',
      '0052_money_conservation.sql',
      '0053_vat_inclusive.sql',
      '0054_catalogue_arabic.sql',
      '0055_task_trace.sql',
      '0056_engagement_message_parts.sql',
    ])
  })

  it('publishes its OpenAPI document with the API version of the spec', async () => {
    const doc = await request(`${service.url}/openapi.json`)
    assert.equal(doc.status, 200)
    assert.equal((doc.body.info as { version: string }).version, '0.16.1')
  })

  it('answers an unknown route in the {"error": {"code", "message"}} shape', async () => {
    const res = await request(`${service.url}/api/nothing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    assert.equal(res.status, 404)
    const error = res.body.error as { code: string; message: string }
    assert.equal(error.code, 'not_found')
    assert.match(error.message, /POST \/api\/nothing/)
  })

  it('answers a malformed body with 400, never a 5XX', async () => {
    const res = await request(`${service.url}/api/nothing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    })
    assert.equal(res.status, 400)
    assert.equal((res.body.error as { code: string }).code, 'invalid_json')
  })
})
