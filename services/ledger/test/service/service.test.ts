import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { appliedMigrations, request, testEnv } from '@svc/kit/testing'
import { ledger } from '../../src/app.ts'
import type { LedgerConfig } from '../../src/config.ts'

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

  it('answers its root with a page saying what it is, or JSON for Accept: application/json', async () => {
    const page = await fetch(`${service.url}/`)
    assert.equal(page.status, 200)
    const text = await page.text()
    assert.match(text, /<h1>svc ledger<\/h1>/)
    assert.match(text, /href="\/docs"/)
    assert.match(text, /href="\/checkpoint"/)
    const json = await request(`${service.url}/`, { headers: { accept: 'application/json' } })
    assert.equal(json.body.service, 'ledger')
    assert.equal((json.body.links as Record<string, string>).docs, `${service.ctx.baseUrl}/docs`)
    assert.match((json.body.links as Record<string, string>).console!, /\/console$/)
  })
})
