import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import type { Kysely } from 'kysely'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import { DEMO_EMAIL } from '../../src/areas/accounts/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import type { IdpTables } from '../../src/db.ts'
import { asOrg, signUpOrg } from '@svc/testing/idp-orgs'
import { ADMIN, browser, csrfOf } from '@svc/testing/idp-flow'

const SHOP = 'https://shop.example.com/callback'
const DESK = 'https://desk.example.org/callback'

describe('organization members: invitations, the org claim and member MFA', () => {
  let service: RunningService<IdpConfig>
  let key: string
  let orgId: string
  let shop: oidc.Configuration
  let desk: oidc.Configuration
  const jar = new CookieJar()

  const orgCall = (method: string, path: string, body?: unknown, apiKey = key) =>
    asOrg(service, apiKey)(method, path, body)
  const signUp = (name: string) => signUpOrg(service, name)
  const orgClient = async (redirect: string) => {
    const created = await orgCall('POST', '/orgs/clients', {
      client_name: 'Shop',
      client_type: 'confidential',
      redirect_uris: [redirect],
    })
    const { client_id, client_secret } = created.body as { client_id: string; client_secret: string }
    return oidc.discovery(
      new URL(service.url),
      client_id,
      client_secret,
      oidc.ClientSecretBasic(client_secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    )
  }
  /** The invitation link the outbox holds for an address. */
  const inviteLink = async (email: string) => {
    const db = service.ctx.database!.db as Kysely<IdpTables>
    const mail = await db
      .selectFrom('dev_outbox')
      .selectAll()
      .where('recipient', '=', email)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow()
    return /(http\S+\/ui\/orgs\/accept\?token=\S+)/.exec(mail.body)![1]!
  }
  const acceptAt = async (link: string) => {
    await jar.fetch(link)
    const form = await (await jar.fetch(`${service.url}/ui/account`)).text()
    return jar.fetch(`${service.url}/ui/orgs/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        csrf: csrfOf(form),
        token: new URL(link).searchParams.get('token')!,
      }).toString(),
    })
  }
  const signInTo = (config: oidc.Configuration, callback: string) =>
    browser(service, config, callback, { jar, consent: { decision: 'approve', scopes: ['organization'] } })

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    ;({ organization_id: orgId, api_key: key } = await signUp('shop'))
    shop = await orgClient(SHOP)
    desk = await orgClient(DESK)
  })
  after(async () => service.close())

  it('invites by email; the invited account joins once, signed in, and no other account can', async () => {
    assert.equal(
      (await orgCall('POST', '/orgs/members/invite', { email: DEMO_EMAIL, role: 'owner' })).status,
      400,
    )
    const invited = await orgCall('POST', '/orgs/members/invite', { email: DEMO_EMAIL, role: 'admin' })
    assert.equal(invited.status, 201)
    const link = await inviteLink(DEMO_EMAIL)

    const anonymous = await new CookieJar().fetch(link)
    assert.equal(anonymous.status, 303)
    assert.match(anonymous.headers.get('location')!, /^\/ui\/login\?return_to=/)

    await signInTo(shop, SHOP).signIn({ scope: 'openid' })
    const joined = await acceptAt(link)
    assert.equal(joined.status, 200)
    assert.match(await joined.text(), /You joined shop as admin\./)
    assert.equal((await acceptAt(link)).status, 400, 'the link works once')

    await orgCall('POST', '/orgs/members/invite', { email: 'someone@example.com', role: 'member' })
    const other = await acceptAt(await inviteLink('someone@example.com'))
    assert.equal(other.status, 403, 'sent to another address')
  })

  it('gives org {id, name, role} with scope organization, and lists members by the sub the clients see', async () => {
    const tokens = await signInTo(shop, SHOP).signIn({ scope: 'openid organization' })
    const claims = tokens.claims()!
    assert.deepEqual(claims.org, { id: orgId, name: 'shop', role: 'admin' })
    const info = await oidc.fetchUserInfo(shop, tokens.access_token, claims.sub)
    assert.deepEqual(info.org, { id: orgId, name: 'shop', role: 'admin' })
    const other = await signInTo(desk, DESK).signIn({ scope: 'openid' })
    assert.equal(other.claims()!.sub, claims.sub, 'one pairwise subject across the organization’s clients')
    assert.equal(other.claims()!.org, undefined, 'only with scope organization')

    const listed = await orgCall('GET', '/orgs/members')
    assert.deepEqual(
      (listed.body.members as Array<Record<string, unknown>>).map(({ user_id, email, role }) => ({
        user_id,
        email,
        role,
      })),
      [{ user_id: claims.sub, email: DEMO_EMAIL, role: 'admin' }],
    )
  })

  it('makes members prove a second factor when the organization requires it', async () => {
    await orgCall('PATCH', '/orgs/me', { require_member_mfa: true })
    const user = signInTo(shop, SHOP)
    const refused = new URL(await user.browse((await user.start({ scope: 'openid' })).url))
    assert.equal(refused.searchParams.get('error'), 'unmet_authentication_requirements')
    await orgCall('PATCH', '/orgs/me', { require_member_mfa: false })
  })

  it('removes members, and another organization cannot', async () => {
    const [member] = (await orgCall('GET', '/orgs/members')).body.members as Array<{ user_id: string }>
    const rival = await signUp('rival')
    assert.equal(
      (await orgCall('DELETE', `/orgs/members/${member!.user_id}`, undefined, rival.api_key)).status,
      404,
    )
    assert.equal((await orgCall('DELETE', `/orgs/members/${member!.user_id}`)).status, 204)
    assert.deepEqual((await orgCall('GET', '/orgs/members')).body.members, [])
    const tokens = await signInTo(shop, SHOP).signIn({ scope: 'openid organization' })
    assert.equal(tokens.claims()!.org, undefined, 'no longer a member')
  })
})
