import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { Sealer } from '@svc/kit'
import { csrfOf } from '@svc/testing/idp-flow'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

/**
 * The idp's lifecycle events (POST /webhooks/svc-id) through the real idp: its account page
 * changes a password and deletes an account, its delivery job signs and sends the event, and the
 * rental ends the sessions, revokes the tokens and lets the member leave.
 */
describe('identity events from the idp', () => {
  let stack: FullStack
  let secret: string
  before(async () => {
    stack = await startFullStack()
    const row = await stack.db.selectFrom('idp_clients').selectAll().executeTakeFirstOrThrow()
    assert.equal(row.lifecycle_webhook_url, `${stack.rental.url}/webhooks/svc-id`)
    secret = new Sealer(stack.rental.ctx.config.encryptionKey)
      .open(row.webhook_secret_sealed!, `idp-webhook:${row.client_id}`)
      .toString('utf8')
  })
  after(() => stack?.close())

  const idpUrl = () => stack.idp.url
  /** A form of the idp's account page, posted in the person's own browser (their idp session). */
  const accountPost = async (who: Client, path: string, fields: Record<string, string>) => {
    const page = await (await who.jar.fetch(`${idpUrl()}/ui/account`)).text()
    return who.jar.fetch(`${idpUrl()}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page), ...fields }).toString(),
      redirect: 'manual',
    })
  }
  const signedOut = (who: Client) => async () => (await stack.call(who, 'GET', '/api/me')).status === 401
  const send = (body: string, signature?: string) =>
    fetch(`${stack.rental.url}/webhooks/svc-id`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(signature === undefined ? {} : { 'x-svc-signature': signature }),
      },
      body,
    })
  const sign = (body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
  const tokenOf = async (who: Client) => {
    const made = await stack.call(who, 'POST', '/api/tokens', { label: 'ci' })
    assert.equal(made.status, 201, made.text)
    return made.body.id as string
  }
  const revoked = async (id: string) =>
    (
      await stack.db
        .selectFrom('api_tokens')
        .select('revoked_at')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).revoked_at !== null

  it('a password changed at the idp ends the sessions and revokes the tokens; a replay changes nothing', async () => {
    const carol = await stack.signInWith('carol@example.test')
    const token = await tokenOf(carol)
    const changed = await accountPost(carol, '/ui/account/password', {
      current_password: 'password-of-carol@example.test',
      new_password: 'a-new-password-of-carol',
    })
    assert.equal(changed.status, 200)
    await eventually('the rental ends carol’s session', signedOut(carol))
    assert.ok(await revoked(token))
    const events = await stack.db
      .selectFrom('rental_events')
      .select(['type', 'data'])
      .where('type', '=', 'member.identity_event')
      .execute()
    const mine = events.find((e) => (e.data as { subject?: string }).subject === carol.me.client.subject)
    assert.equal((mine?.data as { event?: string }).event, 'user.password_changed')
    // the idp's own delivery, sent again: answered, nothing done twice
    const delivery = await (stack.idp.ctx.database!.db as never as FullStack['db'])
      .selectFrom('lifecycle_deliveries' as never)
      .select(['body' as never])
      .where('event' as never, '=', 'user.password_changed' as never)
      .executeTakeFirstOrThrow()
    const body = (delivery as { body: string }).body
    const replay = await send(body, sign(body))
    assert.equal(replay.status, 200)
    assert.equal(((await replay.json()) as { replay: boolean }).replay, true)
  })

  it('a deleted account leaves the organization; the last owner is kept and it is recorded', async () => {
    const invited = await stack.call(stack.alice, 'POST', '/api/org/members', {
      email: 'dave@example.test',
      role: 'member',
    })
    assert.equal(invited.status, 201, invited.text)
    const dave = await stack.signInWith('dave@example.test')
    assert.equal(dave.me.organization.id, stack.alice.me.organization.id)
    const token = await tokenOf(dave)
    assert.equal(
      (await accountPost(dave, '/ui/account/delete', { confirm: 'delete my account' })).status,
      200,
    )
    await eventually('the rental ends dave’s session', signedOut(dave))
    await eventually('dave left alice’s organization', async () => {
      const members = await stack.call(stack.alice, 'GET', '/api/org/members')
      return !JSON.stringify(members.body).includes('dave@example.test')
    })
    assert.ok(await revoked(token))

    const erin = await stack.signInWith('erin@example.test')
    assert.equal(erin.me.organization.role, 'owner')
    assert.equal(
      (await accountPost(erin, '/ui/account/delete', { confirm: 'delete my account' })).status,
      200,
    )
    await eventually('the rental ends erin’s session', signedOut(erin))
    const kept = await stack.db
      .selectFrom('org_members')
      .select('role')
      .where('subject', '=', erin.me.client.subject)
      .executeTakeFirst()
    assert.equal(kept?.role, 'owner', 'the last owner stays: an organization keeps an owner')
    const recorded = await stack.db
      .selectFrom('rental_events')
      .select('data')
      .where('type', '=', 'member.identity_event')
      .where('org_id', '=', erin.me.organization.id)
      .executeTakeFirstOrThrow()
    assert.equal((recorded.data as { membership?: string }).membership, 'kept_last_owner')
    const org = await stack.db
      .selectFrom('orgs')
      .select('erased_at')
      .where('id', '=', erin.me.organization.id)
      .executeTakeFirstOrThrow()
    assert.equal(org.erased_at, null, 'not erased: the organization did not ask for it')
  })

  it('user.deleted of the last owner erases the organization when its retention policy asks for it', async () => {
    const gina = await stack.signInWith('gina@example.test')
    const orgId = gina.me.organization.id
    const asked = await stack.call(gina, 'POST', '/api/retention', { erase_on_owner_deletion: true })
    assert.equal(asked.status, 200, asked.text)
    assert.equal((asked.body.policy as { erase_on_owner_deletion: boolean }).erase_on_owner_deletion, true)
    assert.equal(
      (await accountPost(gina, '/ui/account/delete', { confirm: 'delete my account' })).status,
      200,
    )
    await eventually('gina’s organization is erased', async () => {
      const org = await stack.db
        .selectFrom('orgs')
        .select('erased_at')
        .where('id', '=', orgId)
        .executeTakeFirst()
      return Boolean(org?.erased_at)
    })
    const recorded = await stack.db
      .selectFrom('rental_events')
      .select(['type', 'data'])
      .where('org_id', '=', orgId)
      .where('type', 'in', ['member.identity_event', 'client.erased'])
      .orderBy('seq')
      .execute()
    assert.deepEqual(
      recorded.map((r) => r.type),
      ['member.identity_event', 'client.erased'],
    )
    assert.equal(
      await stack.db.selectFrom('org_members').select('id').where('org_id', '=', orgId).executeTakeFirst(),
      undefined,
    )
    const erasure = await stack.db
      .selectFrom('client_erasures')
      .selectAll()
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow()
    assert.ok(erasure)
  })

  it('consent.revoked ends sessions; user.email_changed updates the member (signed as the idp signs)', async () => {
    const frank = await stack.signInWith('frank@example.test')
    const sub = frank.me.client.subject
    const revokedBody = JSON.stringify({
      event: 'consent.revoked',
      sub,
      occurred_at: new Date().toISOString(),
      data: {},
    })
    assert.equal((await send(revokedBody, sign(revokedBody))).status, 200)
    assert.ok(await signedOut(frank)())
    const emailBody = JSON.stringify({
      event: 'user.email_changed',
      sub,
      occurred_at: new Date().toISOString(),
      data: { email: 'frank.new@example.test', email_verified: true },
    })
    assert.equal((await send(emailBody, sign(emailBody))).status, 200)
    const member = await stack.db
      .selectFrom('org_members')
      .select('email')
      .where('subject', '=', sub)
      .executeTakeFirstOrThrow()
    assert.equal(member.email, 'frank.new@example.test')
  })

  it('refuses a forged or missing signature (403) and a malformed body (400); ignores other events (202)', async () => {
    const sub = stack.alice.me.client.subject
    const body = JSON.stringify({
      event: 'user.deleted',
      sub,
      occurred_at: new Date().toISOString(),
      data: {},
    })
    const forged = await send(
      body,
      `sha256=${createHmac('sha256', 'not-the-secret').update(body).digest('hex')}`,
    )
    assert.equal(forged.status, 403)
    assert.equal(((await forged.json()) as { error: { code: string } }).error.code, 'invalid_event_signature')
    assert.equal((await send(body)).status, 403)
    assert.equal((await send(body, 'sha256=zz')).status, 403)
    // one byte changed after signing
    assert.equal((await send(body.replace('user', 'User'), sign(body))).status, 403)
    for (const bad of [
      '{"event":',
      '[]',
      '{"event":"user.deleted"}',
      JSON.stringify({ event: 'user.deleted', sub, occurred_at: 'soon' }),
    ])
      assert.equal((await send(bad, sign(bad))).status, 400, bad)
    const other = JSON.stringify({
      event: 'user.birthday',
      sub,
      occurred_at: new Date().toISOString(),
      data: {},
    })
    const ignored = await send(other, sign(other))
    assert.equal(ignored.status, 202)
    assert.equal((await stack.call(stack.alice, 'GET', '/api/me')).status, 200, 'alice is untouched')
  })
})
