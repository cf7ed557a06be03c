import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { agents } from '../../src/app.ts'
import { type AgentsConfig, readAgentsConfig } from '../../src/config.ts'
import { BoundedTaskStore } from '../../src/areas/agents/task-store.ts'
import { deriveAgentKey } from '../../src/keys.ts'

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

  it('answers its root with a page saying what it is, or JSON for Accept: application/json', async () => {
    const page = await fetch(`${service.url}/`)
    assert.equal(page.status, 200)
    assert.match(await page.text(), /href="\/agents"/)
    const json = await request(`${service.url}/`, { headers: { accept: 'application/json' } })
    assert.equal(json.body.service, 'agents')
    assert.equal((json.body.links as Record<string, string>).agents, `${service.ctx.baseUrl}/agents`)
  })
})

describe('agents configuration', () => {
  const common = { nodeEnv: 'production' } as Parameters<typeof readAgentsConfig>[1]

  it('refuses production without AGENTS_KEY_SEED, and a seed shorter than 32 bytes', () => {
    assert.throws(() => readAgentsConfig({}, common), /AGENTS_KEY_SEED must be set/)
    const short = Buffer.alloc(16, 1).toString('base64url')
    assert.throws(() => readAgentsConfig({ AGENTS_KEY_SEED: short }, common), /AGENTS_KEY_SEED/)
    const seed = Buffer.alloc(32, 1).toString('base64url')
    assert.equal(readAgentsConfig({ AGENTS_KEY_SEED: seed }, common).keySeed.length, 32)
  })

  it('takes the AGENTS_DELAY_MS test knob outside production only', () => {
    const seed = Buffer.alloc(32, 1).toString('base64url')
    const env = { AGENTS_KEY_SEED: seed, AGENTS_DELAY_MS: '250' }
    assert.throws(() => readAgentsConfig(env, common), /AGENTS_DELAY_MS/)
    assert.equal(readAgentsConfig(env, { ...common, nodeEnv: 'test' }).delayMs, 250)
    assert.equal(readAgentsConfig({ AGENTS_KEY_SEED: seed }, common).delayMs, 0)
  })

  it('derives a different, stable key per agent (HKDF, info = agent id)', () => {
    const seed = new Uint8Array(32).fill(1)
    assert.equal(deriveAgentKey(seed, 'summariser').did, deriveAgentKey(seed, 'summariser').did)
    assert.notEqual(deriveAgentKey(seed, 'summariser').did, deriveAgentKey(seed, 'extractor').did)
    assert.notEqual(
      deriveAgentKey(seed, 'summariser').did,
      deriveAgentKey(new Uint8Array(32), 'summariser').did,
    )
  })
})

describe('bounded task store', () => {
  it('forgets the least recently saved tasks past its bound', async () => {
    const store = new BoundedTaskStore(10)
    for (let i = 0; i < 12; i++)
      await store.save({
        id: `t${i}`,
        contextId: 'c',
        status: { state: 3, message: undefined, timestamp: new Date(1000 * i).toISOString() },
        artifacts: [],
        history: [],
        metadata: undefined,
      })
    assert.equal(store.size, 10)
    assert.equal(await store.load('t0'), undefined)
    assert.equal((await store.load('t11'))?.id, 't11')
  })
})
