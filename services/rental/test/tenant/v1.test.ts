import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Sealer } from '@svc/kit'
import { strFromU8, unzipSync } from 'fflate'
import { sql } from 'kysely'
import { linkOf } from '../../src/areas/events/chain.ts'
import { eventView } from '../../src/areas/events/service.ts'
import { type Answer, type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

const errorOf = (answer: Answer) => answer.body.error as { code: string; message: string }

interface Execution {
  kind: string
  id: string
  state: string
  engagement_id: string | null
  agent_did: string
  job_title: string | null
  agent_name: string | null
  input_preview: string | null
}
interface AuditEntry {
  id: string
  seq: number
  type: string
  who: { type: string; id: string | null }
  from: { ip: string | null }
  outcome: string
  data: Record<string, unknown>
  chain: { pos: number; hash: string } | null
}

describe('rental: the tenant API (/v1), by session and by organization key', () => {
  let stack: FullStack
  let owner: Client
  let viewer: Client
  let engagementId = ''
  let agentDid = ''
  let clientDid = ''
  const taskIds: string[] = []
  before(async () => {
    stack = await startFullStack({ RENTAL_AUDIT_ANCHOR_S: '1' })
    owner = stack.alice
    agentDid = await stack.agentOf('job_summary')
    const key = stack.newClientKey()
    engagementId = await stack.hireAndSign(owner, 'job_summary', agentDid, key)
    const engagement = await stack.call(owner, 'GET', `/api/engagements/${engagementId}`)
    clientDid = (engagement.body.engagement as { client_did: string }).client_did
    for (const text of ['First task of the tenant API.', 'Second one.', 'Third one.']) {
      const made = await stack.call(owner, 'POST', '/api/tasks', { engagement_id: engagementId, text })
      assert.equal(made.status, 200, made.text)
      taskIds.push((made.body.task as { id: string }).id)
    }
    const invited = await stack.call(owner, 'POST', '/v1/users', {
      email: 'viewer@v1.example',
      role: 'viewer',
    })
    assert.equal(invited.status, 201, invited.text)
    viewer = await stack.signInWith('viewer@v1.example')
  })
  after(async () => stack.close())

  /** A /v1 call with an organization key (no cookie, no CSRF). */
  const withKey = async (key: string, method: string, path: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${stack.rental.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    let parsed: Record<string, unknown> = {}
    try {
      parsed = JSON.parse(text) as Record<string, unknown>
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, text, body: parsed }
  }

  const issueKey = async (scopes: string[], extra: Record<string, unknown> = {}, who = owner) => {
    const issued = await stack.call(who, 'POST', '/v1/auth/keys', { label: 'v1 test', scopes, ...extra })
    assert.equal(issued.status, 201, issued.text)
    return issued.body as { id: string; token: string; kind: string; scopes: string[]; prefix: string }
  }

  it('issues an organization key once, lists it with the agt_ tokens (never its plaintext) and revokes it the same way', async () => {
    const key = await issueKey(['tasks:read', 'audit:read'])
    assert.match(key.token, /^ork_[A-Za-z0-9_-]{43}$/)
    assert.equal(key.kind, 'org')
    assert.deepEqual([...key.scopes].sort(), ['audit:read', 'tasks:read'])
    const tokens = await stack.call(owner, 'GET', '/api/tokens')
    const listed = (tokens.body.tokens as Array<{ id: string; kind: string }>).find((t) => t.id === key.id)
    assert.equal(listed?.kind, 'org')
    assert.ok(!tokens.text.includes(key.token), 'the plaintext is not listed')
    const keys = await stack.call(owner, 'GET', '/v1/auth/keys')
    assert.deepEqual(
      (keys.body.keys as Array<{ id: string }>).map((k) => k.id),
      [key.id],
    )
    assert.ok(!keys.text.includes(key.token))
    // stored hashed: no column holds the plaintext
    const row = await stack.db
      .selectFrom('api_tokens')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow()
    assert.ok(!JSON.stringify(row).includes(key.token.slice(8)))

    assert.equal((await withKey(key.token, 'GET', '/v1/executions')).status, 200)
    // rotated as the agt_ tokens are: still an organization key, the old plaintext dead at once
    const rotated = await stack.call(owner, 'POST', `/api/tokens/${key.id}/rotate`)
    const fresh = (rotated.body as { token: string }).token
    assert.match(fresh, /^ork_/)
    assert.equal((await withKey(key.token, 'GET', '/v1/executions')).status, 401)
    assert.equal((await withKey(fresh, 'GET', '/v1/executions')).status, 200)
    // an agt_ token is not an organization key
    const agt = await stack.call(owner, 'POST', '/api/tokens', { label: 'a2a' })
    assert.equal((await withKey((agt.body as { token: string }).token, 'GET', '/v1/org')).status, 401)
    const revoked = await stack.call(owner, 'DELETE', `/api/tokens/${key.id}`)
    assert.equal(revoked.status, 200, revoked.text)
    const after = await withKey(fresh, 'GET', '/v1/executions')
    assert.equal(after.status, 401, after.text)
    assert.equal(errorOf(after).code, 'unauthenticated')
  })

  it('refuses an expired key (401), an unknown one (401), and an expiry in the past at issue (400)', async () => {
    const key = await issueKey(['org:read'], { expires_at: new Date(Date.now() + 3_600_000).toISOString() })
    assert.equal((await withKey(key.token, 'GET', '/v1/org')).status, 200)
    await stack.db
      .updateTable('api_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', key.id)
      .execute()
    const expired = await withKey(key.token, 'GET', '/v1/org')
    assert.equal(expired.status, 401, expired.text)
    const unknown = await withKey(`ork_${'A'.repeat(43)}`, 'GET', '/v1/org')
    assert.equal(unknown.status, 401)
    const past = await stack.call(owner, 'POST', '/v1/auth/keys', {
      label: 'past',
      scopes: ['org:read'],
      expires_at: new Date(Date.now() - 60_000).toISOString(),
    })
    assert.equal(past.status, 400, past.text)
  })

  it('checks a key’s scopes per route: a key of limited scopes is refused elsewhere with 403 naming the scope', async () => {
    const key = await issueKey(['tasks:read'])
    assert.equal((await withKey(key.token, 'GET', '/v1/executions')).status, 200)
    for (const [method, path, body, scope] of [
      ['GET', '/v1/audit', undefined, 'audit:read'],
      ['GET', '/v1/secrets', undefined, 'secrets:read'],
      ['PUT', '/v1/secrets', { name: 'x', value: 'y' }, 'secrets:write'],
      ['GET', '/v1/users', undefined, 'org:read'],
      ['POST', '/v1/auth/keys', { label: 'k', scopes: ['org:read'] }, 'keys:write'],
      ['PATCH', '/v1/users/me', { display_name: 'Key' }, 'profile:write'],
      ['GET', '/v1/tools/approvals', undefined, 'approvals:read'],
    ] as const) {
      const refused = await withKey(key.token, method, path, body)
      assert.equal(refused.status, 403, `${method} ${path}: ${refused.text}`)
      assert.equal(errorOf(refused).code, 'forbidden')
      assert.ok(errorOf(refused).message.includes(scope), refused.text)
    }
    // a key issues no key, nor is given a scope its issuer lacks or that is not a key's
    const notAScope = await stack.call(owner, 'POST', '/v1/auth/keys', { label: 'k', scopes: ['keys:write'] })
    assert.equal(notAScope.status, 400, notAScope.text)
  })

  it('lets owners and admins only issue keys: a viewer is refused, and refused every write', async () => {
    const refused = await stack.call(viewer, 'POST', '/v1/auth/keys', { label: 'v', scopes: ['org:read'] })
    assert.equal(refused.status, 403)
    assert.ok(errorOf(refused).message.includes('keys:write'))
    for (const [method, path, body, permission] of [
      ['PUT', '/v1/secrets', { name: 'viewer', value: 'no' }, 'secrets:write'],
      ['POST', '/v1/users', { email: 'x@v1.example', role: 'member' }, 'members:write'],
      ['PUT', '/v1/roles', { name: 'viewerrole', permissions: ['org:read'] }, 'roles:write'],
    ] as const) {
      const answer = await stack.call(viewer, method, path, body)
      assert.equal(answer.status, 403, `${path}: ${answer.text}`)
      assert.ok(errorOf(answer).message.includes(permission))
    }
    // what the viewer may read
    assert.equal((await stack.call(viewer, 'GET', '/v1/org')).status, 200)
    assert.equal((await stack.call(viewer, 'GET', '/v1/executions')).status, 200)
    // their own profile is theirs to change
    const profile = await stack.call(viewer, 'PATCH', '/v1/users/me', { display_name: 'Vera Viewer' })
    assert.equal(profile.status, 200, profile.text)
  })

  it('asks the session for its CSRF token on writes, and answers 401 with neither session nor key', async () => {
    const noCsrf = await stack.call(owner, 'PUT', '/v1/secrets', { name: 'a', value: 'b' }, { csrf: false })
    assert.equal(noCsrf.status, 403)
    assert.equal(errorOf(noCsrf).code, 'csrf_failed')
    const nobody = await fetch(`${stack.rental.url}/v1/org`)
    assert.equal(nobody.status, 401)
  })

  it('lists executions newest first with filters and cursor paging', async () => {
    const all = await stack.call(owner, 'GET', '/v1/executions')
    assert.equal(all.status, 200, all.text)
    const executions = all.body.executions as Execution[]
    assert.deepEqual(
      executions.slice(0, 3).map((e) => e.id),
      [...taskIds].reverse(),
    )
    assert.ok(executions.every((e) => e.kind === 'task' && e.agent_did === agentDid))
    // named for a person: the job, the agent, the input's first words (in the asked language)
    const first = executions.find((e) => e.id === taskIds[0])!
    assert.deepEqual(
      [first.job_title, first.agent_name, first.input_preview],
      ['Document summary', 'Summariser', 'First task of the tenant API.'],
    )
    const arabic = (await stack.call(owner, 'GET', '/v1/executions?lang=ar')).body.executions as Execution[]
    assert.equal(arabic.find((e) => e.id === taskIds[0])!.job_title, 'ملخص مستند')
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: Answer = await stack.call(
        owner,
        'GET',
        `/v1/executions?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      )
      assert.equal(page.status, 200, page.text)
      seen.push(...(page.body.executions as Execution[]).map((e) => e.id))
      cursor = page.body.next_cursor as string | null
    } while (cursor)
    assert.deepEqual(
      seen,
      executions.map((e) => e.id),
    )
    const byEngagement = await stack.call(
      owner,
      'GET',
      `/v1/executions?engagement=${engagementId}&agent=${agentDid}`,
    )
    assert.equal((byEngagement.body.executions as Execution[]).length, 3)
    const future = await stack.call(
      owner,
      'GET',
      `/v1/executions?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    )
    assert.deepEqual(future.body.executions, [])
    const state = (executions[0] as Execution).state
    const byState = await stack.call(owner, 'GET', `/v1/executions?state=${state}`)
    assert.ok((byState.body.executions as Execution[]).every((e) => e.state === state))
    // another organization sees none of them
    const bobs = await stack.call(stack.bob, 'GET', `/v1/executions?engagement=${engagementId}`)
    assert.deepEqual(bobs.body.executions, [])
    for (const bad of [
      'cursor=bm90LWEtY3Vyc29y',
      'cursor=!!',
      'state=done',
      'limit=0',
      'limit=1e309',
      'since=yesterday',
    ])
      assert.equal((await stack.call(owner, 'GET', `/v1/executions?${bad}`)).status, 400, bad)
    const backwards = await stack.call(
      owner,
      'GET',
      `/v1/executions?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z`,
    )
    assert.equal(backwards.status, 400)
  })

  it('keeps secrets sealed: names, versions and times answered, never values; another organization’s is 404', async () => {
    const value = 'sk_live_the-vault-keeps-this-0123456789'
    const first = await stack.call(owner, 'PUT', '/v1/secrets', { name: 'crm.api-key', value })
    assert.equal(first.status, 200, first.text)
    assert.equal(first.body.version, 1)
    assert.equal(first.body.reference, 'secret://crm.api-key')
    const second = await stack.call(owner, 'PUT', '/v1/secrets', { name: 'crm.api-key', value: `${value}-2` })
    assert.equal(second.body.version, 2)
    const list = await stack.call(owner, 'GET', '/v1/secrets')
    assert.equal(list.status, 200)
    for (const answer of [first, second, list]) assert.ok(!answer.text.includes(value), 'no value answered')
    const audit = await stack.call(owner, 'GET', '/v1/audit?type=secret.saved')
    assert.ok(!audit.text.includes(value), 'the record keeps no value')
    // sealed at rest, under the service key, bound to the organization and the name
    const row = await stack.db
      .selectFrom('tenant_secrets')
      .selectAll()
      .where('name', '=', 'crm.api-key')
      .executeTakeFirstOrThrow()
    assert.ok(!row.sealed.toString('latin1').includes('sk_live'))
    const sealer = new Sealer(stack.rental.ctx.config.encryptionKey)
    const context = `rental tenant secret v1 ${owner.me.organization.id} crm.api-key`
    assert.equal(sealer.open(row.sealed, context).toString('utf8'), `${value}-2`)
    assert.throws(() =>
      sealer.open(row.sealed, `rental tenant secret v1 ${stack.bob.me.organization.id} crm.api-key`),
    )
    // a key with secrets:write writes, recorded as the key
    const key = await issueKey(['secrets:write', 'secrets:read'])
    const byKey = await withKey(key.token, 'PUT', '/v1/secrets', {
      name: 'webhook.signing',
      value: 'whsec_1',
    })
    assert.equal(byKey.status, 200, byKey.text)
    // another organization
    const bobGone = await stack.call(stack.bob, 'DELETE', '/v1/secrets/crm.api-key')
    assert.equal(bobGone.status, 404)
    assert.equal(errorOf(bobGone).code, 'secret_not_found')
    assert.deepEqual((await stack.call(stack.bob, 'GET', '/v1/secrets')).body.secrets, [])
    for (const body of [
      { name: 'Bad Name', value: 'x' },
      { name: 'ok', value: '' },
      { name: 'ok' },
      { name: 'ok', value: 'x', extra: 1 },
    ])
      assert.equal((await stack.call(owner, 'PUT', '/v1/secrets', body)).status, 400, JSON.stringify(body))
    const gone = await stack.call(owner, 'DELETE', '/v1/secrets/webhook.signing')
    assert.equal(gone.status, 200, gone.text)
    await eventually('the key’s write is recorded as the key', async () => {
      const record = await stack.call(owner, 'GET', `/v1/audit?actor=${key.id}&type=request.answered`)
      const entries = record.body.entries as AuditEntry[]
      return entries.some(
        (e) => e.who.type === 'token' && e.data.route === '/v1/secrets' && e.outcome === 'ok',
      )
    })
  })

  it('records every action in a hash chain that the verify command walks; an edited or removed entry is found', async () => {
    const verified = await stack.call(owner, 'GET', '/v1/audit/verify')
    assert.equal(verified.status, 200, verified.text)
    assert.equal(verified.body.ok, true, verified.text)
    const checked = verified.body.checked as number
    assert.ok(checked > 5, verified.text)
    const page = await stack.call(owner, 'GET', '/v1/audit?limit=100')
    const entries = page.body.entries as AuditEntry[]
    const chained = entries.filter((e) => e.chain !== null)
    assert.ok(chained.length > 5)
    // who, what, when, from where, outcome
    const call = entries.find((e) => e.type === 'request.answered' && e.who.type === 'user')!
    assert.ok(call.who.id && call.from.ip && call.outcome)
    const refused = await stack.call(owner, 'GET', '/v1/audit?outcome=refused')
    assert.ok((refused.body.entries as AuditEntry[]).every((e) => e.outcome === 'refused'))

    // edit an entry in the database: the verify names it
    const victim = chained[Math.floor(chained.length / 2)]!
    const original = await stack.db
      .selectFrom('rental_events')
      .select('data')
      .where('seq', '=', String(victim.seq))
      .executeTakeFirstOrThrow()
    await sql`update rental_events set data = jsonb_set(data, '{edited}', 'true') where seq = ${victim.seq}`.execute(
      stack.db,
    )
    const edited = await stack.call(owner, 'GET', '/v1/audit/verify')
    assert.equal(edited.body.ok, false)
    const problem = edited.body.problem as { pos: number; seq: number; problem: string }
    assert.equal(problem.problem, 'edited')
    assert.equal(problem.seq, victim.seq)
    assert.equal(problem.pos, victim.chain!.pos)
    await stack.db
      .updateTable('rental_events')
      .set({ data: JSON.stringify(original.data) })
      .where('seq', '=', String(victim.seq))
      .execute()
    assert.equal((await stack.call(owner, 'GET', '/v1/audit/verify')).body.ok, true)

    // remove one: the gap is named
    await stack.db.deleteFrom('rental_events').where('seq', '=', String(victim.seq)).execute()
    const removed = await stack.call(owner, 'GET', '/v1/audit/verify')
    assert.equal(removed.body.ok, false)
    const gap = removed.body.problem as { pos: number; problem: string }
    assert.equal(gap.problem, 'removed')
    assert.equal(gap.pos, victim.chain!.pos)
    // another organization's chain is its own, and holds
    const bobs = await stack.call(stack.bob, 'GET', '/v1/audit/verify')
    assert.equal(bobs.body.ok, true, bobs.text)
    for (const bad of ['outcome=maybe', 'before=0', 'limit=101', 'type=Not A Type', 'since=never'])
      assert.equal((await stack.call(owner, 'GET', `/v1/audit?${bad}`)).status, 400, bad)
  })

  it('adds members by email with a role, and keeps custom roles to existing permissions (built-in ones immutable)', async () => {
    const made = await stack.call(owner, 'PUT', '/v1/roles', {
      name: 'v1-auditor',
      permissions: ['org:read', 'audit:read'],
      description: 'reads the record',
    })
    assert.equal(made.status, 200, made.text)
    assert.equal(made.body.created, true)
    const added = await stack.call(owner, 'POST', '/v1/users', {
      email: 'auditor@v1.example',
      role: 'v1-auditor',
    })
    assert.equal(added.status, 201, added.text)
    const auditor = await stack.signInWith('auditor@v1.example')
    assert.equal(auditor.me.organization.role, 'v1-auditor')
    assert.equal((await stack.call(auditor, 'GET', '/v1/audit')).status, 200)
    assert.equal((await stack.call(auditor, 'GET', '/v1/executions')).status, 403)
    const users = await stack.call(owner, 'GET', '/v1/users')
    assert.ok((users.body.members as Array<{ email: string }>).some((m) => m.email === 'auditor@v1.example'))
    const again = await stack.call(owner, 'POST', '/v1/users', {
      email: 'auditor@v1.example',
      role: 'viewer',
    })
    assert.equal(again.status, 409)

    // a role in use keeps the permission that makes an owner an owner
    const keeper = await stack.call(owner, 'PUT', '/v1/roles', {
      name: 'v1-keeper',
      permissions: ['org:read', 'members:write', 'members:owners'],
    })
    assert.equal(keeper.status, 200, keeper.text)
    assert.equal(
      (await stack.call(owner, 'POST', '/v1/users', { email: 'keeper@v1.example', role: 'v1-keeper' }))
        .status,
      201,
    )
    const losing = await stack.call(owner, 'PUT', '/v1/roles', {
      name: 'v1-keeper',
      permissions: ['org:read'],
    })
    assert.equal(losing.status, 409, losing.text)
    assert.equal(errorOf(losing).code, 'role_in_use')
    const builtin = await stack.call(owner, 'PUT', '/v1/roles', { name: 'viewer', permissions: ['org:read'] })
    assert.equal(builtin.status, 409)
    assert.equal(errorOf(builtin).code, 'role_builtin')
    // custom roles are the organization's own: another one neither sees nor assigns them, and may
    // make its own role of the same name without touching this one
    const bobsRoles = await stack.call(stack.bob, 'GET', '/v1/roles')
    const bobsNames = (bobsRoles.body.roles as Array<{ name: string }>).map((r) => r.name)
    assert.ok(bobsNames.includes('viewer') && !bobsNames.includes('v1-keeper'), bobsRoles.text)
    const foreign = await stack.call(stack.bob, 'POST', '/v1/users', {
      email: 'stranger@v1.example',
      role: 'v1-keeper',
    })
    assert.equal(foreign.status, 404, foreign.text)
    assert.equal(errorOf(foreign).code, 'role_not_found')
    const same = await stack.call(stack.bob, 'PUT', '/v1/roles', {
      name: 'v1-auditor',
      permissions: ['org:read'],
    })
    assert.equal(same.status, 200, same.text)
    assert.equal(same.body.created, true)
    assert.equal(same.body.members, 0)
    const mine = (await stack.call(owner, 'GET', '/v1/roles')).body.roles as Array<{
      name: string
      permissions: string[]
    }>
    assert.deepEqual(mine.find((r) => r.name === 'v1-auditor')?.permissions, ['audit:read', 'org:read'])
    assert.equal((await stack.call(auditor, 'GET', '/v1/audit')).status, 200, 'alice’s role kept its grants')
    for (const body of [
      { name: 'Bad', permissions: [] },
      { name: 'v1-x', permissions: ['fly:write'] },
      { name: 'v1-x' },
    ])
      assert.equal((await stack.call(owner, 'PUT', '/v1/roles', body)).status, 400, JSON.stringify(body))
    const roles = await stack.call(owner, 'GET', '/v1/roles')
    const listed = roles.body.roles as Array<{ name: string; builtin: boolean; members: number }>
    assert.equal(listed.find((r) => r.name === 'owner')?.builtin, true)
    assert.equal(listed.find((r) => r.name === 'v1-keeper')?.members, 1)
  })

  it('deletes a custom role no one holds; a built-in one, one in use and another organization’s are refused', async () => {
    const spare = await stack.call(owner, 'PUT', '/v1/roles', { name: 'v1-spare', permissions: ['org:read'] })
    assert.equal(spare.status, 200, spare.text)
    const held = await stack.call(owner, 'PUT', '/v1/roles', { name: 'v1-held', permissions: ['org:read'] })
    assert.equal(held.status, 200, held.text)
    for (const email of ['held1@v1.example', 'held2@v1.example'])
      assert.equal((await stack.call(owner, 'POST', '/v1/users', { email, role: 'v1-held' })).status, 201)
    await stack.signInWith('held1@v1.example')
    const inUse = await stack.call(owner, 'DELETE', '/v1/roles/v1-held')
    assert.equal(inUse.status, 409, inUse.text)
    assert.equal(errorOf(inUse).code, 'role_in_use')
    assert.match(errorOf(inUse).message, /1 member\(s\) and 1 pending invitation\(s\)/)
    const builtin = await stack.call(owner, 'DELETE', '/v1/roles/admin')
    assert.equal(builtin.status, 409, builtin.text)
    assert.equal(errorOf(builtin).code, 'role_builtin')
    // another organization's role is not found, and nothing of its own goes
    const foreign = await stack.call(stack.bob, 'DELETE', '/v1/roles/v1-spare')
    assert.equal(foreign.status, 404, foreign.text)
    assert.equal(errorOf(foreign).code, 'role_not_found')
    const refused = await stack.call(viewer, 'DELETE', '/v1/roles/v1-spare')
    assert.equal(refused.status, 403, refused.text)
    assert.ok(errorOf(refused).message.includes('roles:write'))
    assert.equal((await stack.call(owner, 'DELETE', '/v1/roles/BAD NAME')).status, 400)

    const deleted = await stack.call(owner, 'DELETE', '/v1/roles/v1-spare')
    assert.equal(deleted.status, 200, deleted.text)
    assert.deepEqual(deleted.body, { name: 'v1-spare', deleted: true })
    const names = ((await stack.call(owner, 'GET', '/v1/roles')).body.roles as Array<{ name: string }>).map(
      (r) => r.name,
    )
    assert.ok(!names.includes('v1-spare') && names.includes('v1-held'), names.join())
    assert.equal((await stack.call(owner, 'DELETE', '/v1/roles/v1-spare')).status, 404)
    const invite = await stack.call(owner, 'POST', '/v1/users', {
      email: 'late@v1.example',
      role: 'v1-spare',
    })
    assert.equal(invite.status, 404, 'a deleted role is no longer given')
    const audit = await stack.call(owner, 'GET', '/v1/audit?type=role.deleted')
    const entry = (audit.body.entries as AuditEntry[] | undefined)?.find((e) => e.type === 'role.deleted')
    assert.ok(entry, audit.text)
    assert.deepEqual(entry.data.permissions, ['org:read'])
  })

  it('exports the organization server-side: progress polled, a zip of its own rows only, sealed and expiring', async () => {
    const secretValue = 'export-must-not-carry-this-value'
    assert.equal(
      (await stack.call(owner, 'PUT', '/v1/secrets', { name: 'export.probe', value: secretValue })).status,
      200,
    )
    const started = await stack.call(owner, 'POST', '/v1/tenant/exports')
    assert.equal(started.status, 202, started.text)
    const id = started.body.id as string
    const progress = started.body.progress as { done: number; total: number }
    assert.ok(progress.total >= 10 && progress.done === 0, started.text)
    // another organization's export is not found; a viewer may neither start nor follow one
    for (const path of [`/v1/tenant/exports/${id}`, `/v1/tenant/exports/${id}/download`]) {
      const foreign = await stack.call(stack.bob, 'GET', path)
      assert.equal(foreign.status, 404, foreign.text)
      assert.equal(errorOf(foreign).code, 'export_not_found')
    }
    const refused = await stack.call(viewer, 'POST', '/v1/tenant/exports')
    assert.equal(refused.status, 403, refused.text)
    assert.ok(errorOf(refused).message.includes('exports:write'))
    assert.equal((await stack.call(viewer, 'GET', `/v1/tenant/exports/${id}`)).status, 403)

    let status: Answer = started
    await eventually('the export is ready', async () => {
      status = await stack.call(owner, 'GET', `/v1/tenant/exports/${id}`)
      return status.body.state === 'ready' || status.body.state === 'failed'
    })
    assert.equal(status.body.state, 'ready', status.text)
    assert.deepEqual(status.body.progress, {
      done: progress.total,
      total: progress.total,
      section: null,
      percent: 100,
    })
    const expires =
      Date.parse(status.body.expires_at as string) - Date.parse(status.body.completed_at as string)
    assert.equal(expires, 7 * 86_400_000)
    const archive = status.body.archive as { download_url: string; sha256: string; bytes: number }

    const res = await owner.jar.fetch(`${stack.rental.url}${archive.download_url}`)
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/zip')
    assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename=".+\.zip"/)
    const bytes = new Uint8Array(await res.arrayBuffer())
    assert.equal(bytes.length, archive.bytes)
    const files = unzipSync(bytes)
    const read = (name: string) => JSON.parse(strFromU8(files[name]!)) as unknown
    const manifest = read('manifest.json') as {
      format: string
      organization_id: string
      files: Array<{ file: string }>
    }
    assert.equal(manifest.format, 'rental-tenant-export/v1')
    assert.equal(manifest.organization_id, owner.me.organization.id)
    assert.equal(manifest.files.length, progress.total)
    for (const f of manifest.files) assert.ok(files[f.file], f.file)
    const members = read('members.json') as Array<{ email: string }>
    assert.ok(members.some((m) => m.email === 'viewer@v1.example'))
    const tasks = read('tasks.json') as Array<{ id: string }>
    for (const taskId of taskIds)
      assert.ok(
        tasks.some((t) => t.id === taskId),
        taskId,
      )
    assert.ok((read('engagements.json') as Array<{ id: string }>).some((e) => e.id === engagementId))
    assert.ok((read('roles.json') as Array<{ name: string }>).some((r) => r.name === 'v1-held'))
    assert.ok((read('secrets.json') as Array<{ name: string }>).some((r) => r.name === 'export.probe'))
    assert.ok((read('audit.json') as Array<{ type: string }>).some((e) => e.type === 'role.deleted'))
    for (const section of [
      'budgets',
      'disputes',
      'incidents',
      'schedules',
      'webhooks',
      'invoices',
      'refunds',
    ])
      assert.ok(Array.isArray(read(`${section}.json`)), section)
    const statement = read('statement.json') as unknown[]
    assert.ok(
      statement.some((s) => JSON.stringify(s).includes(engagementId)),
      'the engagement’s statement lines',
    )
    assert.equal((read('retention.json') as { org_id: string }).org_id, owner.me.organization.id)
    // nothing of another organization, and no secret's value
    const all = Object.values(files)
      .map((f) => strFromU8(f))
      .join('\n')
    assert.ok(!all.includes(stack.bob.me.organization.id), 'bob’s organization is not in alice’s archive')
    assert.ok(!all.includes(secretValue), 'no secret value')
    // sealed at rest: the stored bytes are not the zip
    const row = await stack.db
      .selectFrom('tenant_exports')
      .select(['archive_sealed'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    assert.ok(row.archive_sealed && !Buffer.from(row.archive_sealed).includes(Buffer.from('manifest.json')))

    // past its seven days: expired, the download gone (410), a new export may start
    await stack.db
      .updateTable('tenant_exports')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', id)
      .execute()
    assert.equal((await stack.call(owner, 'GET', `/v1/tenant/exports/${id}`)).body.state, 'expired')
    const gone = await stack.call(owner, 'GET', `/v1/tenant/exports/${id}/download`)
    assert.equal(gone.status, 410, gone.text)
    assert.equal(errorOf(gone).code, 'export_expired')
    // one export at a time: a running one is named (409); one whose job was lost an hour ago gives way
    await stack.db
      .insertInto('tenant_exports')
      .values({
        id: 'exp_stuck',
        org_id: owner.me.organization.id,
        requested_by: 'm',
        state: 'running',
        sections_total: 1,
      })
      .execute()
    const busy = await stack.call(owner, 'POST', '/v1/tenant/exports')
    assert.equal(busy.status, 409, busy.text)
    assert.equal(errorOf(busy).code, 'export_in_progress')
    assert.ok(errorOf(busy).message.includes('exp_stuck'))
    await stack.db
      .updateTable('tenant_exports')
      .set({ created_at: new Date(Date.now() - 2 * 3600_000) })
      .where('id', '=', 'exp_stuck')
      .execute()
    const next = await stack.call(owner, 'POST', '/v1/tenant/exports')
    assert.equal(next.status, 202, next.text)
    assert.equal((await stack.call(owner, 'GET', '/v1/tenant/exports/exp_stuck')).body.state, 'failed')
    await eventually('the next export is ready', async () => {
      const state = (await stack.call(owner, 'GET', `/v1/tenant/exports/${next.body.id as string}`)).body
        .state
      return state === 'ready'
    })
    const listed = await stack.call(owner, 'GET', '/v1/tenant/exports')
    assert.ok((listed.body.exports as Array<{ id: string }>).some((e) => e.id === id))
    const audit = await stack.call(owner, 'GET', '/v1/audit?type=tenant.export_ready')
    assert.ok(
      (audit.body.entries as AuditEntry[]).some(
        (e) => (e.data as { bytes?: number }).bytes === archive.bytes,
      ),
    )
  })

  it('changes the member’s own profile, and answers the organization with its usage, DID and ledger', async () => {
    const changed = await stack.call(owner, 'PATCH', '/v1/users/me', {
      display_name: 'Alice Owner',
      locale: 'ar',
      notifications: { task_completed: false, weekly_summary: true },
    })
    assert.equal(changed.status, 200, changed.text)
    assert.equal(changed.body.display_name, 'Alice Owner')
    assert.equal(changed.body.locale, 'ar')
    assert.deepEqual(changed.body.notifications, { task_completed: false, weekly_summary: true })
    const mine = await stack.call(owner, 'GET', '/v1/users/me')
    assert.equal(mine.status, 200, mine.text)
    assert.equal(mine.body.display_name, 'Alice Owner')
    assert.equal(mine.body.account_url, `${stack.idp.url}/ui/account`)
    const locale = await stack.call(owner, 'GET', '/api/locale')
    assert.equal(locale.body.locale, 'ar')
    const merged = await stack.call(owner, 'PATCH', '/v1/users/me', {
      notifications: { task_completed: true },
    })
    assert.deepEqual(merged.body.notifications, { task_completed: true, weekly_summary: true })
    for (const body of [{}, { locale: 'fr' }, { notifications: { spam: true } }, { display_name: '' }])
      assert.equal((await stack.call(owner, 'PATCH', '/v1/users/me', body)).status, 400, JSON.stringify(body))
    await stack.call(owner, 'PATCH', '/v1/users/me', { locale: null })

    const key = await issueKey(['org:read'])
    const org = await withKey(key.token, 'GET', '/v1/org')
    assert.equal(org.status, 200, org.text)
    assert.equal(org.body.id, owner.me.organization.id)
    const usage = org.body.usage as { tasks: number; spend_fils: number; currency: string }
    assert.ok(usage.tasks >= 3)
    assert.equal(usage.currency, 'AED')
    assert.equal(org.body.did, clientDid)
    assert.equal((org.body.ledger as { url: string }).url, stack.ledger.url)
    assert.equal((org.body.onboarding as { state: string }).state, 'not_started')
    const bobs = await stack.call(stack.bob, 'GET', '/v1/org')
    assert.equal(bobs.body.id, stack.bob.me.organization.id)
    assert.equal(bobs.body.did, null)
  })

  it('takes an organization key on the A2A surface within its scopes', async () => {
    const rpc = async (key: string) => {
      const res = await fetch(`${stack.rental.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
      })
      return (await res.json()) as { result?: { tasks: Array<{ id: string }> }; error?: { message: string } }
    }
    const reader = await rpc((await issueKey(['tasks:read'])).token)
    assert.ok(reader.result, JSON.stringify(reader))
    assert.ok(taskIds.every((id) => reader.result!.tasks.some((t) => t.id === id)))
    const other = await rpc((await issueKey(['org:read'])).token)
    assert.ok(other.error && !other.result, JSON.stringify(other))
    assert.match(other.error.message, /tasks:read/)
  })

  it('answers connections’ health (none yet) and the pending approvals', async () => {
    const health = await stack.call(owner, 'GET', '/v1/connect/connections/health')
    assert.equal(health.status, 200)
    assert.deepEqual(health.body.connections, [])
    await stack.call(owner, 'POST', `/api/engagements/${engagementId}/config`, {
      approval: { mode: 'always' },
    })
    const held = await stack.call(owner, 'POST', '/api/tasks', { engagement_id: engagementId, text: 'Held.' })
    const heldId = (held.body.task as { id: string }).id
    const key = await issueKey(['approvals:read'])
    const pending = await withKey(key.token, 'GET', '/v1/tools/approvals')
    assert.equal(pending.status, 200, pending.text)
    const approvals = pending.body.approvals as Array<{
      task_id: string
      state: string
      job_title: string | null
      agent_name: string | null
    }>
    assert.ok(
      approvals.some((a) => a.task_id === heldId && a.state === 'pending'),
      pending.text,
    )
    const mine = approvals.find((a) => a.task_id === heldId)!
    assert.deepEqual([mine.job_title, mine.agent_name], ['Document summary', 'Summariser'])
    assert.deepEqual((await stack.call(stack.bob, 'GET', '/v1/tools/approvals')).body.approvals, [])
    assert.equal((await stack.call(owner, 'GET', '/v1/tools/approvals?limit=0')).status, 400)
  })

  it('publishes the chain’s head to the ledger; a chain rewritten whole is caught against it', async () => {
    const bobOrg = stack.bob.me.organization.id
    interface Anchored {
      ok: boolean
      head: { pos: number }
      problem: { problem: string; pos: number } | null
      anchor: { pos: number; state: string; ledger_index: number | null; message: string } | null
    }
    let report: Anchored | undefined
    await eventually('bob’s head is anchored on the ledger', async () => {
      report = (await stack.call(stack.bob, 'GET', '/v1/audit/verify')).body as unknown as Anchored
      return report.anchor?.state === 'matches' && report.anchor.pos === report.head.pos
    })
    assert.equal(report!.ok, true)
    const entry = await fetch(`${stack.ledger.url}/v1/entries/${report!.anchor!.ledger_index}`)
    const published = (await entry.json()) as { receipt: { type: string; subject: string; data: unknown } }
    assert.equal(published.receipt.type, 'audit.anchored')
    assert.equal(published.receipt.subject, `audit:${bobOrg}`)

    // rewrite the whole chain consistently (an entry edited, every link and the head recomputed):
    // the walk alone finds nothing, the ledger's head does
    const rows = await stack.db
      .selectFrom('rental_events')
      .selectAll()
      .where('org_id', '=', bobOrg)
      .where('chain_pos', 'is not', null)
      .orderBy('chain_pos')
      .execute()
    let prev = '0'.repeat(64)
    for (const [i, row] of rows.entries()) {
      const data = i === 0 ? { ...(row.data as object), rewritten: true } : row.data
      const link = linkOf(prev, Number(row.chain_pos), eventView({ ...row, data }))
      await stack.db
        .updateTable('rental_events')
        .set({ data: JSON.stringify(data), chain_hash: link })
        .where('seq', '=', row.seq)
        .execute()
      prev = link
    }
    await stack.db
      .updateTable('rental_audit_chains')
      .set({ last_hash: prev })
      .where('org_id', '=', bobOrg)
      .execute()
    const caught = (await stack.call(stack.bob, 'GET', '/v1/audit/verify')).body as unknown as Anchored
    assert.equal(caught.ok, false, JSON.stringify(caught))
    assert.equal(caught.problem?.problem, 'anchor_mismatch')
    assert.equal(caught.anchor?.state, 'mismatch')
    assert.match(caught.anchor!.message, /rewritten/)
  })
})
