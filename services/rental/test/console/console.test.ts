import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { CookieJar } from '@svc/kit/testing'
import type { Kysely } from 'kysely'
import { verifyApiToken } from '../../src/areas/tokens/service.ts'
import type { RentalTables } from '../../src/db.ts'
import { eventually, type Stack, signIn, startStack } from '../support/stack.ts'

interface Token {
  id: string
  label: string
  prefix: string
  token?: string
  scopes: string[]
  engagement_ids: string[] | null
  expires_at: string | null
}

describe('rental console: CSRF, catalogue, API tokens, public pages', () => {
  let stack: Stack
  let db: Kysely<RentalTables>
  let alice: Awaited<ReturnType<typeof signIn>>
  let bob: { jar: CookieJar; csrf: string; me: { client: { subject: string } } }

  before(async () => {
    stack = await startStack()
    db = stack.rental.ctx.database!.db as Kysely<RentalTables>
    alice = await signIn(stack)
    bob = await signIn(stack, undefined, { freshIdpSession: true })
    // the demo user twice: make bob another client, as a second account would be
    await db
      .updateTable('console_sessions')
      .set({ subject: 'another-client' })
      .where(
        'id_hash',
        '=',
        (await import('../../src/areas/auth/hooks.ts')).sha256(bob.jar.get('rental_session')!),
      )
      .execute()
  })
  after(async () => stack.close())

  const call = (
    who: { jar: CookieJar; csrf?: string },
    method: string,
    path: string,
    body?: unknown,
    /** the CSRF header to send: the caller's own token by default, null for none */
    csrf: string | null = who.csrf ?? null,
  ) =>
    who.jar.fetch(`${stack.rental.url}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(csrf === null ? {} : { 'x-csrf-token': csrf }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  const json = async <T>(res: Response) => (await res.json()) as T

  it('GET /api/jobs lists at least four jobs with prices in AED fils and their agents’ DIDs', async () => {
    await eventually('the agents are imported', async () => {
      const jobs = (await json<{ jobs: Array<{ agents: unknown[] }> }>(await call(alice, 'GET', '/api/jobs')))
        .jobs
      return jobs.every((j) => j.agents.length > 0)
    })
    const res = await call(alice, 'GET', '/api/jobs')
    assert.equal(res.status, 200)
    const { jobs } = await json<{
      jobs: Array<{
        id: string
        profile: string
        outcome: string
        price_fils: number
        currency: string
        agents: Array<{ id: string; did: string; card_url: string }>
      }>
    }>(res)
    assert.ok(jobs.length >= 4)
    for (const job of jobs) {
      assert.ok(Number.isInteger(job.price_fils) && job.price_fils > 0)
      assert.equal(job.currency, 'AED')
      assert.ok(job.profile && job.outcome)
      for (const agent of job.agents) {
        const listed = stack.agents.agents.find((a) => a.id === agent.id)!
        assert.equal(agent.did, listed.did)
        assert.match(agent.did, /^did:key:z6Mk/)
        assert.equal(agent.card_url, listed.card_url)
      }
    }
    assert.deepEqual(
      new Set(jobs.flatMap((j) => j.agents.map((a) => a.id))),
      new Set(['summariser', 'extractor', 'invoice-checker', 'note-taker', 'team-lead']),
    )
    assert.equal((await fetch(`${stack.rental.url}/api/jobs`)).status, 401)
  })

  it('seeding is idempotent: importing again changes nothing', async () => {
    const { importAgents, seedJobs } = await import('../../src/areas/catalogue/service.ts')
    const before = await db.selectFrom('job_agents').selectAll().execute()
    await seedJobs(db)
    await importAgents(db, stack.agents.url, stack.rental.ctx.log)
    assert.deepEqual(await db.selectFrom('job_agents').selectAll().execute(), before)
    assert.equal((await db.selectFrom('agents').selectAll().execute()).length, 5)
  })

  it('refuses every S+C route without the CSRF header or with a wrong one: 403 csrf_failed', async () => {
    const issued = await json<Token>(await call(alice, 'POST', '/api/tokens', { label: 'csrf probe' }))
    const routes: Array<[string, string, unknown]> = [
      ['POST', '/api/tokens', { label: 'x' }],
      ['DELETE', `/api/tokens/${issued.id}`, undefined],
      ['POST', `/api/tokens/${issued.id}/policy`, { scopes: ['tasks:write'] }],
      ['POST', `/api/tokens/${issued.id}/rotate`, undefined],
    ]
    for (const [method, path, body] of routes)
      for (const csrf of [null, '', 'wrong-token', bob.csrf]) {
        const res = await call(alice, method, path, body, csrf)
        assert.equal(res.status, 403, `${method} ${path} with ${csrf}`)
        const error = (await json<{ error: { code: string; message: string } }>(res)).error
        assert.equal(error.code, 'csrf_failed')
      }
    // and without a session at all: 401
    for (const [method, path, body] of routes) {
      const res = await fetch(`${stack.rental.url}${path}`, {
        method,
        headers: { 'x-csrf-token': alice.csrf, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      })
      assert.equal(res.status, 401, `${method} ${path}`)
    }
    // the token is untouched
    const list = await json<{ tokens: Token[] }>(await call(alice, 'GET', '/api/tokens'))
    assert.ok(list.tokens.some((t) => t.id === issued.id && t.scopes.join() === 'tasks:read,tasks:write'))
  })

  it('API tokens: issued once, listed without plaintext, policy, rotation, revocation', async () => {
    const res = await call(alice, 'POST', '/api/tokens', { label: 'ci runner' })
    assert.equal(res.status, 201)
    const issued = await json<Token>(res)
    assert.match(issued.token!, /^agt_[A-Za-z0-9_-]{43}$/)
    assert.ok(issued.token!.startsWith(issued.prefix))
    assert.equal(issued.label, 'ci runner')
    const stored = await db
      .selectFrom('api_tokens')
      .selectAll()
      .where('id', '=', issued.id)
      .executeTakeFirstOrThrow()
    assert.equal(stored.token_hash.length, 32)
    assert.ok(!JSON.stringify(stored).includes(issued.token!))

    const verified = await verifyApiToken(db, `Bearer ${issued.token}`)
    assert.equal(verified?.owner, alice.me.organization.id, 'the token belongs to the organization')
    assert.equal(await verifyApiToken(db, `Bearer ${issued.token!.slice(0, -1)}x`), null)
    assert.equal(await verifyApiToken(db, 'Bearer nonsense'), null)

    const list = await json<{ tokens: Token[] }>(await call(alice, 'GET', '/api/tokens'))
    const listed = list.tokens.find((t) => t.id === issued.id)!
    assert.equal(listed.token, undefined)
    assert.equal(listed.prefix, issued.prefix)

    const expiry = new Date(Date.now() + 86_400_000).toISOString()
    const policy = await call(alice, 'POST', `/api/tokens/${issued.id}/policy`, {
      scopes: ['tasks:write', 'tasks:read'],
      engagement_ids: ['eng_1'],
      expires_at: expiry,
    })
    assert.equal(policy.status, 200)
    const withPolicy = await json<Token>(policy)
    assert.deepEqual(withPolicy.scopes, ['tasks:write', 'tasks:read'])
    assert.deepEqual(withPolicy.engagement_ids, ['eng_1'])
    assert.equal(withPolicy.expires_at, expiry)
    assert.deepEqual((await verifyApiToken(db, issued.token))?.scopes, ['tasks:write', 'tasks:read'])
    const past = await call(alice, 'POST', `/api/tokens/${issued.id}/policy`, {
      expires_at: '2001-01-01T00:00:00Z',
    })
    assert.equal(past.status, 400)
    const unknownField = await call(alice, 'POST', `/api/tokens/${issued.id}/policy`, { admin: true })
    assert.equal(unknownField.status, 400)

    const rotated = await call(alice, 'POST', `/api/tokens/${issued.id}/rotate`)
    assert.equal(rotated.status, 200)
    const fresh = await json<Token>(rotated)
    assert.equal(fresh.id, issued.id)
    assert.notEqual(fresh.token, issued.token)
    assert.equal(await verifyApiToken(db, issued.token), null)
    assert.equal((await verifyApiToken(db, fresh.token))?.id, issued.id)

    const revoked = await call(alice, 'DELETE', `/api/tokens/${issued.id}`)
    assert.equal(revoked.status, 200)
    assert.equal(await verifyApiToken(db, fresh.token), null)
    assert.equal((await call(alice, 'DELETE', `/api/tokens/${issued.id}`)).status, 404)
    const after = await json<{ tokens: Token[] }>(await call(alice, 'GET', '/api/tokens'))
    assert.ok(!after.tokens.some((t) => t.id === issued.id))
  })

  it('an empty policy change ({}) is 400 invalid_request and changes nothing, never a 5XX', async () => {
    const issued = await json<Token>(await call(alice, 'POST', '/api/tokens', { label: 'empty policy' }))
    const res = await call(alice, 'POST', `/api/tokens/${issued.id}/policy`, {})
    assert.equal(res.status, 400)
    assert.equal((await json<{ error: { code: string } }>(res)).error.code, 'invalid_request')
    assert.deepEqual((await verifyApiToken(db, issued.token))?.scopes, ['tasks:read', 'tasks:write'])
  })

  it('another client’s token is 404 on every route, and not in its list', async () => {
    const issued = await json<Token>(await call(alice, 'POST', '/api/tokens', { label: 'mine' }))
    for (const [method, path, body] of [
      ['DELETE', `/api/tokens/${issued.id}`, undefined],
      ['POST', `/api/tokens/${issued.id}/policy`, { scopes: ['tasks:read'] }],
      ['POST', `/api/tokens/${issued.id}/rotate`, undefined],
    ] as const) {
      const res = await call(bob, method, path, body)
      assert.equal(res.status, 404, `${method} ${path}`)
      assert.equal((await json<{ error: { code: string } }>(res)).error.code, 'not_found')
    }
    const list = await json<{ tokens: Token[] }>(await call(bob, 'GET', '/api/tokens'))
    assert.ok(!list.tokens.some((t) => t.id === issued.id))
    assert.ok(await verifyApiToken(db, issued.token))
  })

  it('refuses a bad token label with 400, never a 5XX', async () => {
    for (const body of [
      {},
      { label: '' },
      { label: 'x'.repeat(101) },
      { label: null },
      { label: 'a', extra: 1 },
    ])
      assert.equal((await call(alice, 'POST', '/api/tokens', body)).status, 400, JSON.stringify(body))
  })

  it('i18n: en and ar catalogues, 404 for another language, and the script form', async () => {
    const en = await fetch(`${stack.rental.url}/api/i18n/en`)
    assert.equal(en.status, 200)
    const enBody = await json<{ lang: string; dir: string; messages: Record<string, string> }>(en)
    assert.equal(enBody.dir, 'ltr')
    const ar = await json<{ lang: string; dir: string; messages: Record<string, string> }>(
      await fetch(`${stack.rental.url}/api/i18n/ar`),
    )
    assert.equal(ar.dir, 'rtl')
    assert.deepEqual(Object.keys(ar.messages).sort(), Object.keys(enBody.messages).sort())
    const unknown = await fetch(`${stack.rental.url}/api/i18n/xx`)
    assert.equal(unknown.status, 404)
    assert.equal((await json<{ error: { code: string } }>(unknown)).error.code, 'unknown_language')
    const script = await fetch(`${stack.rental.url}/api/i18n.js`)
    assert.match(script.headers.get('content-type')!, /javascript/)
    assert.match(await script.text(), /^window\.SVC_I18N = \{/)
  })

  it('status: the service, its version and its dependencies; the HTML page', async () => {
    const res = await fetch(`${stack.rental.url}/status`)
    assert.equal(res.status, 200)
    const body = await json<{
      service: string
      version: string
      sign_in: string
      dependencies: Record<string, { url: string; reachable: boolean }>
    }>(res)
    assert.equal(body.service, 'rental')
    assert.equal(body.version, '0.16.1')
    assert.equal(body.sign_in, 'available')
    assert.equal(body.dependencies.idp!.reachable, true)
    assert.equal(body.dependencies.ledger!.reachable, false)
    assert.equal(body.dependencies.agents!.url, stack.agents.url)
    const page = await fetch(`${stack.rental.url}/status.html`)
    assert.match(page.headers.get('content-type')!, /text\/html/)
    assert.match(await page.text(), /rental 0\.16\.1/)
  })

  it('the landing and market pages are HTML, escaped, with Arabic right to left', async () => {
    const landing = await fetch(`${stack.rental.url}/`)
    assert.equal(landing.status, 200)
    assert.match(landing.headers.get('content-security-policy')!, /default-src 'none'/)
    assert.match(await landing.text(), /href="\/auth\/login\?ui_locales=en"/)
    await db
      .updateTable('jobs')
      .set({ description: '<script>alert(1)</script>' })
      .where('id', '=', 'job_summary')
      .execute()
    const market = await (await fetch(`${stack.rental.url}/market`)).text()
    assert.ok(!market.includes('<script>alert(1)</script>'))
    assert.match(market, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
    assert.match(market, /25\.00 AED/)
    assert.match(market, /did:key:z6Mk/)
    const arabic = await (await fetch(`${stack.rental.url}/market?lang=ar`)).text()
    assert.match(arabic, /<html lang="ar" dir="rtl">/)
    // signing in from an Arabic page asks the idp for Arabic pages
    assert.match(arabic, /href="\/auth\/login\?ui_locales=ar"/)
    const login = await fetch(`${stack.rental.url}/auth/login?ui_locales=ar`, { redirect: 'manual' })
    const authorize = new URL(login.headers.get('location')!)
    assert.equal(authorize.searchParams.get('ui_locales'), 'ar')
    const idpPage = await fetch(authorize, { redirect: 'manual' })
    const signIn = await fetch(new URL(idpPage.headers.get('location')!, authorize), { redirect: 'manual' })
    assert.match(await signIn.text(), /<html lang="ar" dir="rtl">/)
  })

  it('the root answers JSON for Accept: application/json, and the landing page for a browser', async () => {
    const json = await fetch(`${stack.rental.url}/`, { headers: { accept: 'application/json' } })
    assert.equal(json.status, 200)
    assert.match(json.headers.get('vary')!, /Accept/)
    const body = (await json.json()) as { service: string; links: Record<string, string> }
    assert.equal(body.service, 'rental')
    const { baseUrl, topology } = stack.rental.ctx
    assert.equal(body.links.console, `${baseUrl}/console`)
    assert.equal(body.links.discovery, `${topology.idp.url}/.well-known/openid-configuration`)
    const browser = await fetch(`${stack.rental.url}/`, {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    })
    assert.match(browser.headers.get('content-type')!, /text\/html/)
  })
})
