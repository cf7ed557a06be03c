import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { idp } from '../src/app.ts'
import type { IdpConfig } from '../src/config.ts'

describe('idp rate limits', () => {
  let service: RunningService<IdpConfig>
  before(async () => {
    service = await startService(idp, testEnv({ IDP_DISCOVERY_RATE_PER_MIN: '5' }), { fresh: true })
  })
  after(async () => service.close())

  it('limits JWKS requests per IP, answering 429 with Retry-After once the window is spent', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${service.url}/.well-known/jwks.json`)
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('ratelimit-limit'), '5')
      assert.equal(res.headers.get('ratelimit-remaining'), String(4 - i))
    }
    const limited = await request(`${service.url}/.well-known/jwks.json`)
    assert.equal(limited.status, 429)
    assert.equal(
      limited.body.error,
      'slow_down',
      "the spec's code for a rate limit (identity-provider.md, Errors)",
    )
    const retryAfter = Number(limited.headers.get('retry-after'))
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
    assert.equal((await fetch(`${service.url}/readyz`)).status, 200, 'other endpoints are not counted')
  })
})
