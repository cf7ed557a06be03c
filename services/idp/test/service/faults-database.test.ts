import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { endpointOf, FaultProxy } from '../../../../packages/kit/test/fault-proxy.ts'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN } from '@svc/testing/idp-flow'

const databaseUrl = process.env.DATABASE_URL
/** Statement and connect timeouts are 1 s here: a request answers within a few of them. */
const BOUND_MS = 4_000

describe(
  'the idp when its database refuses or goes silent',
  { skip: !databaseUrl && 'needs DATABASE_URL: an embedded PGlite cannot be cut' },
  () => {
    let proxy: FaultProxy
    let service: RunningService<IdpConfig>
    let n = 0
    const signUp = async () => {
      const started = Date.now()
      const res = await request(`${service.url}/orgs/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: `Faults${n}`,
          contact_email: `ops${n++}@faults.example.com`,
          accept_terms: true,
        }),
        signal: AbortSignal.timeout(20_000),
      })
      return { ...res, ms: Date.now() - started }
    }
    before(async () => {
      proxy = await FaultProxy.start(endpointOf(databaseUrl!))
      service = await startService(
        idp,
        testEnv({
          IDP_ADMIN_TOKEN: ADMIN,
          IDP_REGISTER_RATE_PER_MIN: '0',
          DATABASE_URL: proxy.url(databaseUrl!),
          DATABASE_STATEMENT_TIMEOUT_MS: '1000',
          DATABASE_CONNECT_TIMEOUT_MS: '1000',
        }),
        { fresh: true },
      )
    })
    after(async () => {
      proxy?.set('pass')
      await service?.close()
      await proxy?.close()
    })

    for (const fault of ['refuse', 'blackhole'] as const)
      it(`answers 503 temporarily_unavailable within the bound while the database ${fault}s, then recovers`, async () => {
        assert.equal((await signUp()).status, 201)
        proxy.set(fault)
        for (let i = 0; i < 3; i++) {
          const res = await signUp()
          assert.equal(res.status, 503, `${fault}: ${JSON.stringify(res.body)}`)
          assert.equal(res.body.error, 'temporarily_unavailable')
          assert.ok(res.ms < BOUND_MS, `${fault}: answered in ${res.ms} ms`)
        }
        const ready = await request(`${service.url}/readyz`, { signal: AbortSignal.timeout(5_000) })
        assert.equal(ready.status, 503)
        assert.equal((ready.body.checks as Record<string, string>).db, 'down')

        proxy.set('pass')
        const deadline = Date.now() + 10_000
        for (;;) {
          const res = await signUp()
          if (res.status === 201) break
          if (Date.now() > deadline) throw new Error(`no recovery: ${res.status} ${JSON.stringify(res.body)}`)
          await new Promise((r) => setTimeout(r, 200))
        }
        assert.equal((await request(`${service.url}/readyz`)).status, 200)
      })
  },
)
