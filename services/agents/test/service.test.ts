import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { agents } from '../src/app.ts'
import type { AgentsConfig } from '../src/config.ts'

describe('agents service', () => {
  let service: RunningService<AgentsConfig>
  before(async () => {
    service = await startService(agents, testEnv(), { fresh: true })
  })
  after(async () => service.close())

  it('runs without a database and is ready', async () => {
    assert.equal(service.ctx.database, undefined)
    const ready = await request(`${service.url}/readyz`)
    assert.equal(ready.status, 200)
    assert.equal((ready.body.checks as Record<string, string>).db, undefined)
    assert.deepEqual((await request(`${service.url}/healthz`)).body, { status: 'ok' })
  })

  it('publishes its OpenAPI document', async () => {
    const doc = await request(`${service.url}/openapi.json`)
    assert.equal((doc.body.info as { title: string }).title, 'agents')
  })
})
