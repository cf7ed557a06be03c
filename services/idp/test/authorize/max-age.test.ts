import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import type * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'http://127.0.0.1:9/callback'

describe('max_age=0: a fresh sign-in, then the code (not the sign-in page again)', () => {
  let service: RunningService<IdpConfig>
  let config: oidc.Configuration
  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    ;({ config } = await registerClient(service, { redirect_uris: [CALLBACK] }))
  })
  after(async () => service.close())

  it('asks an older session to sign in again, and the sign-in just made meets it (auth_time in whole seconds)', async () => {
    const b = browser(service, config, CALLBACK)
    const first = await b.signIn()
    const firstAuth = first.claims()!.auth_time!
    await new Promise((r) => setTimeout(r, 1_100))
    const flow = await b.start({ max_age: '0' })
    const res = await b.jar.fetch(flow.url)
    assert.match(res.headers.get('location') ?? '', /^\/ui\/login\?/, 'an older session signs in again')
    const again = await b.signIn({ max_age: '0' })
    assert.ok(again.claims()!.auth_time! > firstAuth)
  })
})
