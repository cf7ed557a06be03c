import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { appliedMigrations, request, testEnv } from '@svc/kit/testing'
import { ledger } from '../src/app.ts'
import type { LedgerConfig } from '../src/config.ts'

describe('ledger service', () => {
  let service: RunningService<LedgerConfig>
  before(async () => {
    service = await startService(ledger, testEnv(), { fresh: true })
  })
  after(async () => service.close())

  it('is live and ready with its database', async () => {
    assert.deepEqual((await request(`${service.url}/healthz`)).body, { status: 'ok' })
    assert.equal((await request(`${service.url}/readyz`)).status, 200)
  })

  it('has applied its migrations', async () => {
    assert.deepEqual(await appliedMigrations(service.ctx.database!), [
      '0001_leaves.sql',
      '0002_log.sql',
      '0003_webhooks.sql',
    ])
  })

  it('publishes its OpenAPI document', async () => {
    const doc = await request(`${service.url}/openapi.json`)
    assert.equal((doc.body.info as { title: string }).title, 'ledger')
  })
})
