import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'

interface Member {
  id: string
  subject: string | null
  email: string | null
  role: string
  state: 'invited' | 'joined'
}

const errorOf = (body: Record<string, unknown>) => body.error as { code: string; message: string }

describe('rental: client organizations, members and roles', () => {
  let stack: FullStack
  let owner: Client
  let engagementId = ''
  let carolClient: Client
  before(async () => {
    stack = await startFullStack()
    owner = stack.alice
    engagementId = await stack.hireAndSign(
      owner,
      'job_summary',
      await stack.agentOf('job_summary'),
      stack.newClientKey(),
    )
  })
  after(async () => stack.close())

  const members = async (who: Client) =>
    (await stack.call(who, 'GET', '/api/org/members')).body.members as Member[]

  it('makes an organization at first sign-in, the signer its owner; two clients, two organizations', async () => {
    assert.equal(owner.me.organization.role, 'owner')
    assert.ok(owner.me.organization.permissions.includes('members:owners'))
    assert.notEqual(stack.bob.me.organization.id, owner.me.organization.id)
    assert.equal(stack.bob.me.organization.role, 'owner')
    const listed = await members(owner)
    assert.deepEqual(
      listed.map((m) => [m.subject, m.role, m.state]),
      [[owner.me.client.subject, 'owner', 'joined']],
    )
  })

  it('an invitee joins at its next sign-in with a verified email, and shares the organization’s objects', async () => {
    const invited = await stack.call(owner, 'POST', '/api/org/members', {
      email: 'Carol@Example.test',
      role: 'member',
    })
    assert.equal(invited.status, 201, invited.text)
    assert.equal((invited.body as unknown as Member).state, 'invited')
    const carol = await stack.signInWith('carol@example.test')
    carolClient = carol
    assert.equal(carol.me.organization.id, owner.me.organization.id)
    assert.equal(carol.me.organization.role, 'member')
    const joined = (await members(owner)).find((m) => m.id === invited.body.id)!
    assert.equal(joined.state, 'joined')
    assert.equal(joined.subject, carol.me.client.subject)
    // the organization's engagement is carol's to read and use; another organization's client gets 404
    assert.equal((await stack.call(carol, 'GET', `/api/engagements/${engagementId}`)).status, 200)
    const task = await stack.call(carol, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'Two lines.',
    })
    assert.equal(task.status, 200, task.text)
    const taskId = (task.body.task as { id: string }).id
    assert.equal((await stack.call(owner, 'GET', `/api/tasks/${taskId}`)).status, 200)
    assert.equal((await stack.call(stack.bob, 'GET', `/api/tasks/${taskId}`)).status, 404)
    assert.equal((await stack.call(stack.bob, 'GET', `/api/engagements/${engagementId}`)).status, 404)
  })

  it('an invitation waits for a verified email: an unverified one signs in to an organization of its own', async () => {
    const invited = await stack.call(owner, 'POST', '/api/org/members', {
      email: 'dave@example.test',
      role: 'admin',
    })
    assert.equal(invited.status, 201)
    const dave = await stack.signInWith('dave@example.test', { verified: false })
    assert.notEqual(dave.me.organization.id, owner.me.organization.id)
    assert.equal(dave.me.organization.role, 'owner')
    assert.equal((await members(owner)).find((m) => m.id === invited.body.id)!.state, 'invited')
    assert.equal(
      (await stack.call(owner, 'DELETE', `/api/org/members/${invited.body.id as string}`)).status,
      200,
    )
  })

  it('a member’s role lacks members:write (403 naming it); only owners make owners; the last owner stays', async () => {
    const carol = (await members(owner)).find((m) => m.email === 'Carol@Example.test')!
    // carol (member) reads the members but cannot invite
    assert.equal((await stack.call(carolClient, 'GET', '/api/org/members')).status, 200)
    const refused = await stack.call(carolClient, 'POST', '/api/org/members', {
      email: 'z@example.test',
      role: 'viewer',
    })
    assert.equal(refused.status, 403)
    assert.equal(errorOf(refused.body).code, 'forbidden')
    assert.match(errorOf(refused.body).message, /members:write/)

    const admin = await stack.call(owner, 'POST', '/api/org/members', {
      email: 'gina@example.test',
      role: 'admin',
    })
    const gina = await stack.signInWith('gina@example.test')
    assert.equal(gina.me.organization.role, 'admin')
    const makeOwner = await stack.call(gina, 'POST', `/api/org/members/${carol.id}/role`, { role: 'owner' })
    assert.equal(makeOwner.status, 403)
    assert.equal(errorOf(makeOwner.body).code, 'forbidden')
    assert.match(errorOf(makeOwner.body).message, /members:owners/)
    const demoteOwner = await stack.call(
      gina,
      'POST',
      `/api/org/members/${owner.me.organization.member_id}/role`,
      {
        role: 'viewer',
      },
    )
    assert.equal(demoteOwner.status, 403, 'an admin cannot unmake an owner either')
    const toBilling = await stack.call(gina, 'POST', `/api/org/members/${carol.id}/role`, { role: 'billing' })
    assert.equal(toBilling.status, 200, toBilling.text)
    assert.equal((toBilling.body as unknown as Member).role, 'billing')

    // the last owner can neither leave nor lose the role
    const self = owner.me.organization.member_id
    const leave = await stack.call(owner, 'DELETE', `/api/org/members/${self}`)
    assert.equal(leave.status, 409)
    assert.equal(errorOf(leave.body).code, 'last_owner')
    const demote = await stack.call(owner, 'POST', `/api/org/members/${self}/role`, { role: 'admin' })
    assert.equal(demote.status, 409)
    // an owner makes gina an owner: then alice may step down
    assert.equal(
      (await stack.call(owner, 'POST', `/api/org/members/${admin.body.id as string}/role`, { role: 'owner' }))
        .status,
      200,
    )
    assert.equal(
      (await stack.call(owner, 'POST', `/api/org/members/${self}/role`, { role: 'admin' })).status,
      200,
    )
    assert.equal(
      (await stack.call(gina, 'POST', `/api/org/members/${self}/role`, { role: 'owner' })).status,
      200,
    )
  })

  it('billing sees money but runs no task; a viewer only reads; a removed member’s sessions end', async () => {
    const list = await members(owner)
    const carol = list.find((m) => m.email === 'Carol@Example.test')!
    // carol is billing now: money views and releases, no hiring, no tasks
    assert.equal(
      (await stack.call(carolClient, 'GET', `/api/engagements/${engagementId}/releases/pending`)).status,
      200,
    )
    const task = await stack.call(carolClient, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'x',
    })
    assert.equal(task.status, 403)
    assert.match(errorOf(task.body).message, /tasks:write/)
    const invite = await stack.call(owner, 'POST', '/api/org/members', {
      email: 'ivy@example.test',
      role: 'viewer',
    })
    const ivy = await stack.signInWith('ivy@example.test')
    assert.equal(ivy.me.organization.role, 'viewer')
    assert.equal((await stack.call(ivy, 'GET', '/api/engagements')).status, 200)
    const hire = await stack.call(ivy, 'POST', `/api/engagements/${engagementId}/signatures`, {
      sla_signature: 'x',
    })
    assert.equal(hire.status, 403)
    assert.match(errorOf(hire.body).message, /engagements:write/)
    const token = await stack.call(ivy, 'POST', '/api/tokens', { label: 'nope' })
    assert.equal(token.status, 403)
    assert.match(errorOf(token.body).message, /tokens:write/)

    const removed = await stack.call(owner, 'DELETE', `/api/org/members/${invite.body.id as string}`)
    assert.equal(removed.status, 200)
    assert.equal((await stack.call(ivy, 'GET', '/api/me')).status, 401, 'the removed member signs in again')
    assert.ok(!(await members(owner)).some((m) => m.id === invite.body.id))
    assert.equal(carol.role, 'billing')
  })

  it('a token has no scope its creator’s role lacks, at creation or by policy (a role is a row)', async () => {
    await stack.db
      .insertInto('rental_roles')
      .values({
        name: 'reader-bot',
        permissions: ['org:read', 'tokens:read', 'tokens:write', 'tasks:read'],
        description: 'test',
      })
      .execute()
    const invite = await stack.call(owner, 'POST', '/api/org/members', {
      email: 'jo@example.test',
      role: 'reader-bot',
    })
    assert.equal(invite.status, 201, invite.text)
    const jo = await stack.signInWith('jo@example.test')
    assert.deepEqual(jo.me.organization.permissions, [
      'org:read',
      'tokens:read',
      'tokens:write',
      'tasks:read',
    ])
    const issued = await stack.call(jo, 'POST', '/api/tokens', { label: 'reader' })
    assert.equal(issued.status, 201, issued.text)
    assert.deepEqual(issued.body.scopes, ['tasks:read'])
    const widen = await stack.call(jo, 'POST', `/api/tokens/${issued.body.id as string}/policy`, {
      scopes: ['tasks:read', 'tasks:write'],
    })
    assert.equal(widen.status, 403)
    assert.match(errorOf(widen.body).message, /tasks:write/)
    // the token is the organization's: the owner lists it and may widen it
    const listed = (await stack.call(owner, 'GET', '/api/tokens')).body.tokens as Array<{ id: string }>
    assert.ok(listed.some((t) => t.id === issued.body.id))
    const widened = await stack.call(owner, 'POST', `/api/tokens/${issued.body.id as string}/policy`, {
      scopes: ['tasks:read', 'tasks:write'],
    })
    assert.equal(widened.status, 200)
  })

  it('two owners demoting or removing each other at once: one of them stays owner, never a 5XX', async () => {
    for (const change of ['demote', 'remove'] as const) {
      const lee = await stack.signInWith(`lee-${change}@example.test`)
      const invited = await stack.call(lee, 'POST', '/api/org/members', {
        email: `mo-${change}@example.test`,
        role: 'owner',
      })
      assert.equal(invited.status, 201, invited.text)
      const mo = await stack.signInWith(`mo-${change}@example.test`)
      assert.equal(mo.me.organization.role, 'owner')
      const act = (who: Client, target: Client) =>
        change === 'demote'
          ? stack.call(who, 'POST', `/api/org/members/${target.me.organization.member_id}/role`, {
              role: 'viewer',
            })
          : stack.call(who, 'DELETE', `/api/org/members/${target.me.organization.member_id}`)
      const answers = await Promise.all([act(lee, mo), act(mo, lee)])
      const statuses = answers.map((a) => a.status).sort()
      assert.ok(
        statuses.every((s) => s < 500),
        `${change}: ${answers.map((a) => a.text).join(' | ')}`,
      )
      const left = (
        await Promise.all([lee, mo].map((who) => stack.call(who, 'GET', '/api/org/members')))
      ).find((a) => a.status === 200)!.body.members as Member[]
      assert.equal(left.filter((m) => m.role === 'owner').length, 1, `${change}: ${JSON.stringify(statuses)}`)
    }
  })

  it('refuses bad member requests with 4XX and changes nothing', async () => {
    const before = await members(owner)
    const cases: Array<[string, string, unknown, number, string]> = [
      ['POST', '/api/org/members', { email: 'x@example.test', role: 'emperor' }, 404, 'role_not_found'],
      ['POST', '/api/org/members', { email: 'not-an-email', role: 'member' }, 400, 'invalid_request'],
      [
        'POST',
        '/api/org/members',
        { email: 'x@example.test', role: 'member', extra: 1 },
        400,
        'invalid_request',
      ],
      ['POST', '/api/org/members', { email: 'carol@example.test', role: 'viewer' }, 409, 'already_member'],
      ['DELETE', '/api/org/members/mem_nobody', undefined, 404, 'member_not_found'],
      [
        'DELETE',
        `/api/org/members/${stack.bob.me.organization.member_id}`,
        undefined,
        404,
        'member_not_found',
      ],
      [
        'POST',
        `/api/org/members/${stack.bob.me.organization.member_id}/role`,
        { role: 'viewer' },
        404,
        'member_not_found',
      ],
      ['POST', `/api/org/members/${owner.me.organization.member_id}/role`, {}, 400, 'invalid_request'],
    ]
    for (const [method, path, body, status, code] of cases) {
      const res = await stack.call(owner, method, path, body)
      assert.equal(res.status, status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`)
      assert.equal(errorOf(res.body).code, code)
    }
    assert.deepEqual(await members(owner), before)
  })

  it('GET /api/admin/operators: operators only (in development the demo user is one)', async () => {
    assert.equal(owner.me.client.subject !== '', true)
    const listed = await stack.call(owner, 'GET', '/api/admin/operators')
    assert.equal(listed.status, 200, listed.text)
    assert.deepEqual(listed.body.operators, [{ id: 'demo@svc.local', kind: 'email' }])
    const stranger = await stack.signInWith('kim@example.test')
    // inviting a client of another organization says nothing about it: the invitation waits
    const invited = await stack.call(owner, 'POST', '/api/org/members', {
      email: 'kim@example.test',
      role: 'viewer',
    })
    assert.equal(invited.status, 201)
    assert.equal((invited.body as unknown as Member).state, 'invited')
    const refused = await stack.call(stranger, 'GET', '/api/admin/operators')
    assert.equal(refused.status, 403)
    assert.equal(errorOf(refused.body).code, 'forbidden')
    assert.equal(await (await fetch(`${stack.rental.url}/api/admin/operators`)).status, 401)
  })
})
