import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import type { Kysely } from 'kysely'
import * as oauth from 'oauth4webapi'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import type { IdpTables } from '../../src/db.ts'
import { ADMIN, browser, csrfOf, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://agent.example.com/callback'
const TASK = {
  purpose: 'Book one flight to Lisbon',
  max_uses: '3',
  grant_ttl: '3600',
  ceiling: JSON.stringify({ amount: 500, currency: 'EUR' }),
}
interface Tsk {
  id: string
  purpose: string
  uses_left: number
  exp: number
  ceiling?: Record<string, unknown>
}

describe('task-bounded grants', () => {
  let service: RunningService<IdpConfig>
  let agent: Awaited<ReturnType<typeof registerClient>>
  let as: oauth.AuthorizationServer

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    agent = await registerClient(service, { client_name: 'Travel agent', redirect_uris: [CALLBACK] })
    as = await oauth.processDiscoveryResponse(
      new URL(service.url),
      await oauth.discoveryRequest(new URL(service.url), { [oauth.allowInsecureRequests]: true }),
    )
  })
  after(async () => service.close())

  const tskOf = async (accessToken: string) =>
    (
      await oauth.validateJwtAccessToken(
        as,
        new Request(`${service.url}/api`, { headers: { authorization: `Bearer ${accessToken}` } }),
        agent.clientId,
        { [oauth.allowInsecureRequests]: true },
      )
    ).tsk as unknown as Tsk

  const refusal = async (work: Promise<unknown>) => {
    try {
      await work
    } catch (err) {
      const { error, error_description } = err as { error?: string; error_description?: string }
      return `${error}: ${error_description}`
    }
    throw new Error('not refused')
  }

  it('carries tsk in every token and spends one use each, until the grant is exhausted', async () => {
    const user = browser(service, agent.config, CALLBACK)
    const tokens = await user.signIn({ scope: 'openid offline_access', ...TASK })
    const first = await tskOf(tokens.access_token)
    assert.match(first.id, /^tsk_/)
    assert.equal(first.purpose, TASK.purpose)
    assert.equal(first.uses_left, 2)
    assert.deepEqual(first.ceiling, { amount: 500, currency: 'EUR' })
    const now = Math.floor(Date.now() / 1000)
    assert.ok(first.exp > now + 3500 && first.exp <= now + 3600)
    assert.ok(tokens.expires_in! <= 600)

    const second = await oidc.refreshTokenGrant(agent.config, tokens.refresh_token!)
    assert.equal((await tskOf(second.access_token)).uses_left, 1)
    const third = await oidc.refreshTokenGrant(agent.config, second.refresh_token!)
    assert.deepEqual(await tskOf(third.access_token), { ...first, uses_left: 0 })
    assert.match(
      await refusal(oidc.refreshTokenGrant(agent.config, third.refresh_token!)),
      /^invalid_grant: the task grant is exhausted/,
    )
    const info = await oidc.tokenIntrospection(agent.config, third.access_token)
    assert.equal((info.tsk as unknown as Tsk).uses_left, 0, 'tokens already issued stand until they expire')
  })

  it('spends a use for each token exchanged from a task token', async () => {
    const user = browser(service, agent.config, CALLBACK)
    const tokens = await user.signIn({ ...TASK, max_uses: '2' })
    const exchange = () =>
      oidc.genericGrantRequest(agent.config, 'urn:ietf:params:oauth:grant-type:token-exchange', {
        subject_token: tokens.access_token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      })
    const exchanged = await exchange()
    assert.equal((await tskOf(exchanged.access_token)).uses_left, 0)
    assert.match(await refusal(exchange()), /^invalid_grant: the task grant is exhausted/)
  })

  it('refuses a partial or out-of-range set of task parameters with invalid_request', async () => {
    const user = browser(service, agent.config, CALLBACK)
    const partials: Array<Record<string, string>> = [
      { purpose: TASK.purpose },
      { purpose: TASK.purpose, max_uses: '3' },
      { max_uses: '3', grant_ttl: '3600' },
      { ceiling: TASK.ceiling },
      { ...TASK, max_uses: '0' },
      { ...TASK, max_uses: '1001' },
      { ...TASK, grant_ttl: '59' },
      { ...TASK, grant_ttl: String(90 * 86_400 + 1) },
      { ...TASK, ceiling: JSON.stringify(Object.fromEntries([...'abcdefghi'].map((k) => [k, 1]))) },
      { ...TASK, ceiling: '[1,2]' },
      { ...TASK, ceiling: 'amount=500' },
      { ...TASK, purpose: ' ' },
    ]
    for (const params of partials) {
      const location = new URL(await user.browse((await user.start(params)).url))
      assert.equal(location.searchParams.get('error'), 'invalid_request', JSON.stringify(params))
      assert.equal(location.searchParams.get('code'), null)
    }
    const nine = JSON.stringify(Object.fromEntries([...'abcdefgh'].map((k) => [k, 1])))
    const accepted = new URL(await user.browse((await user.start({ ...TASK, ceiling: nine })).url))
    assert.ok(accepted.searchParams.get('code'), 'eight ceiling fields are allowed')
  })

  it('shows running grants on the account page, where the user ends them', async () => {
    const user = browser(service, agent.config, CALLBACK)
    const tokens = await user.signIn({
      scope: 'openid offline_access',
      ...TASK,
      purpose: 'Renew my passport',
    })
    const { id } = await tskOf(tokens.access_token)
    const account = await (await user.jar.fetch(`${service.url}/ui/account`)).text()
    assert.match(account, /<strong>Travel agent<\/strong>: Renew my passport\. 2 of 3 uses/)
    assert.match(account, /limits: amount 500, currency EUR/)
    const end = (task_id: string) =>
      user.jar.fetch(`${service.url}/ui/account/tasks/end`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: csrfOf(account), task_id }).toString(),
      })
    assert.equal((await end('tsk_someone_else')).status, 404)
    assert.equal((await end(id)).status, 303)
    assert.match(
      await refusal(oidc.refreshTokenGrant(agent.config, tokens.refresh_token!)),
      /^invalid_grant: the task grant was ended by the user/,
    )
    assert.deepEqual(await oidc.tokenIntrospection(agent.config, tokens.access_token), { active: false })
    await assert.rejects(
      oidc.fetchUserInfo(agent.config, tokens.access_token, oidc.skipSubjectCheck),
      (err: Error & { status?: number }) => err.status === 401,
    )
    const after = await (await user.jar.fetch(`${service.url}/ui/account`)).text()
    assert.doesNotMatch(after, /Renew my passport/)
    assert.equal((await end(id)).status, 404, 'an ended grant cannot be ended again')
  })

  it('refuses tokens once the deadline passes', async () => {
    const user = browser(service, agent.config, CALLBACK)
    const flow = await user.start({ scope: 'openid offline_access', ...TASK })
    const callback = new URL(await user.browse(flow.url))
    // time passes: the grant's deadline moves into the past
    const db = service.ctx.database!.db as Kysely<IdpTables>
    await db
      .updateTable('task_grants')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('purpose', '=', TASK.purpose)
      .where('uses', '=', 0)
      .execute()
    assert.match(
      await refusal(
        oidc.authorizationCodeGrant(agent.config, callback, {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
          expectedNonce: flow.nonce,
        }),
      ),
      /^invalid_grant: the task grant has expired/,
    )
  })
})
