import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { endpointOf, FaultProxy } from '../../../../packages/kit/test/fault-proxy.ts'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN } from '@svc/testing/idp-flow'

const redisUrl = process.env.REDIS_URL
/** A request must be answered within this, whatever Redis does (command timeout 300 ms here). */
const BOUND_MS = 2_500

async function timed(url: string, init: RequestInit = {}) {
  const started = Date.now()
  const res = await request(url, { ...init, signal: AbortSignal.timeout(10_000) })
  return { ...res, ms: Date.now() - started }
}

describe(
  'the idp when Redis is down or silent',
  { skip: !redisUrl && 'needs REDIS_URL: a memory kv cannot fail' },
  () => {
    let proxy: FaultProxy
    let service: RunningService<IdpConfig>
    before(async () => {
      proxy = await FaultProxy.start(endpointOf(redisUrl!))
      service = await startService(
        idp,
        testEnv({ IDP_ADMIN_TOKEN: ADMIN, REDIS_URL: proxy.url(redisUrl!), REDIS_COMMAND_TIMEOUT_MS: '300' }),
        { fresh: true },
      )
    })
    after(async () => {
      proxy?.set('pass')
      await service?.close()
      await proxy?.close()
    })

    /** What must keep answering, and what must refuse rather than skip its replay check. */
    async function assertServesWithoutRedis(fault: string) {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json', '/ui/login']) {
        const res = await timed(`${service.url}${path}`)
        assert.equal(res.status, 200, `${fault}: ${path} answers`)
        assert.ok(res.ms < BOUND_MS, `${fault}: ${path} answered in ${res.ms} ms`)
      }
      const ready = await timed(`${service.url}/readyz`)
      assert.equal(ready.status, 200, `${fault}: the instance stays in the balancer`)
      assert.deepEqual(ready.body, { status: 'degraded', checks: { db: 'ok', redis: 'degraded' } })
      assert.ok(ready.ms < BOUND_MS)

      // the spec's component health names the failing component
      const health = await timed(`${service.url}/healthz`)
      assert.equal(health.status, 503)
      assert.equal(health.body.redis, 'down')

      // a nonce that could not be stored would be refused later, or, worse, not be single use
      const nonce = await timed(`${service.url}/nonce`, { method: 'POST' })
      assert.equal(nonce.status, 503, `${fault}: a nonce is refused, never issued unrecorded`)
      assert.equal(nonce.body.error, 'temporarily_unavailable')
      assert.equal(nonce.headers.get('retry-after'), '5')
      assert.ok(nonce.ms < BOUND_MS, `${fault}: /nonce answered in ${nonce.ms} ms`)
    }

    async function assertRecovered() {
      const deadline = Date.now() + 10_000
      for (;;) {
        const ready = await request(`${service.url}/readyz`)
        if (ready.status === 200 && ready.body.status === 'ready') break
        if (Date.now() > deadline) throw new Error(`readiness did not recover: ${JSON.stringify(ready.body)}`)
        await new Promise((r) => setTimeout(r, 200))
      }
      const nonce = await request(`${service.url}/nonce`, { method: 'POST' })
      assert.equal(nonce.status, 200)
      assert.equal(typeof nonce.body.c_nonce, 'string')
    }

    it('serves discovery, JWKS and the login page, stays ready (degraded) and refuses nonces when Redis refuses connections', async () => {
      await assertRecovered()
      proxy.set('refuse')
      await assertServesWithoutRedis('refused')
      proxy.set('pass')
      await assertRecovered()
    })

    it('does the same, within the bound, when Redis accepts connections and never answers', async () => {
      proxy.set('blackhole')
      await assertServesWithoutRedis('black hole')
      proxy.set('pass')
      await assertRecovered()
    })
  },
)
