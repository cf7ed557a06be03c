import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { ADMIN } from '@svc/testing/idp-flow'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'

describe('idp rate limits', () => {
  let service: RunningService<IdpConfig>
  before(async () => {
    service = await startService(idp, testEnv({ IDP_DISCOVERY_RATE_PER_MIN: '5' }), { fresh: true })
  })
  after(async () => service.close())

  it('limits JWKS requests per IP, answering 429 with Retry-After once the window is spent', async () => {
    // a fixed window may reset between two requests: the limit holds within twice its size, whatever the clock
    let limited: Awaited<ReturnType<typeof request>> | undefined
    let allowed = 0
    for (let i = 0; i < 11 && !limited; i++) {
      const res = await request(`${service.url}/.well-known/jwks.json`)
      if (res.status === 429) limited = res
      else {
        assert.equal(res.status, 200)
        assert.equal(res.headers.get('ratelimit-limit'), '5')
        allowed++
      }
    }
    assert.ok(limited && allowed >= 5, `refused after ${allowed} requests`)
    // the spec's code for a rate limit (identity-provider.md, Errors)
    assert.equal(limited.body.error, 'slow_down')
    const retryAfter = Number(limited.headers.get('retry-after'))
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
    assert.equal((await fetch(`${service.url}/readyz`)).status, 200, 'other endpoints are not counted')
  })

  it('limits organization sign-ups to 5 a minute per IP', async () => {
    let limited: Awaited<ReturnType<typeof request>> | undefined
    let created = 0
    for (let i = 0; i < 11 && !limited; i++) {
      const res = await request(`${service.url}/orgs/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Org ${i}`, contact_email: `o${i}@example.com`, accept_terms: true }),
      })
      if (res.status === 429) limited = res
      else {
        assert.equal(res.status, 201)
        created++
      }
    }
    assert.ok(limited && created >= 5, `refused after ${created} sign-ups`)
    assert.equal(limited.body.error, 'slow_down')
  })

  it('limits /token per client and per IP, with slow_down and Retry-After', async () => {
    const limited = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '2', IDP_TOKEN_RATE_PER_MIN_IP: '4' }),
      { fresh: true },
    )
    try {
      const register = async () =>
        (
          await request(`${limited.url}/manage/v1/clients`, {
            method: 'POST',
            headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
            body: JSON.stringify({
              client_name: 'c',
              client_type: 'public',
              redirect_uris: ['http://127.0.0.1/cb'],
            }),
          })
        ).body.client_id as string
      const [first, second] = [await register(), await register()]
      // the counts below must fall in one fixed window: start with at least 5 s of the minute left
      const left = 60_000 - (Date.now() % 60_000)
      if (left < 5_000) await new Promise((r) => setTimeout(r, left + 50))
      const token = (clientId: string) =>
        request(`${limited.url}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code: 'nope',
            client_id: clientId,
          }).toString(),
        })
      assert.equal((await token(first)).body.error, 'invalid_grant')
      assert.equal((await token(first)).body.error, 'invalid_grant')
      const perClient = await token(first)
      assert.equal(perClient.status, 429)
      assert.equal(perClient.body.error, 'slow_down')
      assert.ok(Number(perClient.headers.get('retry-after')) >= 1)
      assert.equal((await token(second)).body.error, 'invalid_grant', 'another client has its own allowance')
      const perIp = await token(second)
      assert.equal(perIp.status, 429, 'the fifth request from this address')
    } finally {
      await limited.close()
    }
  })
})
