import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { asOrg, signUpOrg } from '@svc/testing/idp-orgs'
import { type NotesKey, newNotesKey, storeToolCredential } from '../support/connect-client.ts'
import { Declarations } from '../../src/areas/models/service.ts'
import { type Answer, type FullStack, startFullStack } from '../support/full-stack.ts'

interface Model {
  agent_did: string
  listing_id: string
  model: string
  version: string | null
  provider: string | null
  declared_by: string
}
const codeOf = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code

describe('rental models: what the listed agents’ operators declare at the idp', () => {
  let s: FullStack
  const declared = { gpt: '', claude: '', none: '' }

  before(async () => {
    // the test reads the idp's registry itself, beside the rental: no per-IP limit between the two
    s = await startFullStack(
      { RENTAL_OPERATORS: 'demo@svc.local' },
      { idpEnv: { IDP_REGISTRY_RATE_PER_MIN: '0' } },
    )
    const org = asOrg(s.idp, (await signUpOrg(s.idp, 'Modelshop')).api_key)
    const agent = async (name: string, model?: Record<string, string>) => {
      const made = await org('POST', '/orgs/clients', {
        client_name: name,
        client_type: 'confidential',
        redirect_uris: ['https://modelshop.example.com/callback'],
      })
      const client = made.body as { did: string; client_id: string }
      if (model) {
        const res = await org('PUT', `/orgs/clients/${client.client_id}/agent-model`, model)
        assert.equal(res.status, 200, JSON.stringify(res.body))
      }
      return client.did
    }
    declared.gpt = await agent('Writer', { model: 'gpt-5', provider: 'OpenAI', version: '2025-08' })
    declared.claude = await agent('Reader', { model: 'claude-sonnet', provider: 'Anthropic' })
    declared.none = await agent('Quiet')
    // listings of those agents (the market's own tests cover publishing; here only the rows matter)
    let n = 0
    for (const did of [declared.gpt, declared.claude, declared.none]) {
      n += 1
      await sql`insert into rental_listings (id, org_id, agent_did, title, description, price_fils, search)
        values (${`lst_models_${n}`}, 'org_platform', ${did}, ${`Agent ${n}`}, 'x', 1000, to_tsvector('simple', 'x'))`.execute(
        s.db,
      )
    }
    // a built-in agent's listing: the idp's registry declares no model for it
    const builtIn = await s.agentOf('job_summary')
    const published = await s.call(s.alice, 'POST', '/api/market/listings', {
      agent_did: builtIn,
      title: 'Digest',
      description: 'Summaries.',
      price_fils: 6000,
    })
    assert.equal(published.status, 200, published.text)
  })
  after(async () => s?.close())

  it('lists each listed agent’s declared model, labelled declared_by operator', async () => {
    const res = await s.call(s.alice, 'GET', '/api/models')
    assert.equal(res.status, 200, res.text)
    const models = res.body.models as Model[]
    assert.equal(res.body.total, 2)
    const byDid = new Map(models.map((m) => [m.agent_did, m]))
    assert.deepEqual(
      { ...byDid.get(declared.gpt), listing_title: undefined },
      {
        agent_did: declared.gpt,
        listing_id: 'lst_models_1',
        listing_title: undefined,
        external: false,
        model: 'gpt-5',
        version: '2025-08',
        provider: 'OpenAI',
        declared_by: 'operator',
        source: 'idp_registry',
      },
    )
    assert.equal(byDid.get(declared.claude)?.model, 'claude-sonnet')
    assert.equal(byDid.get(declared.claude)?.version, null)
    assert.equal(byDid.has(declared.none), false)
    // any organization's member reads the list
    assert.equal((await s.call(s.bob, 'GET', '/api/models')).status, 200)
  })

  it('filters by provider (case-insensitive) and pages', async () => {
    const openai = await s.call(s.alice, 'GET', '/api/models?provider=openai')
    assert.equal(openai.status, 200, openai.text)
    assert.deepEqual(
      (openai.body.models as Model[]).map((m) => m.model),
      ['gpt-5'],
    )
    const page = await s.call(s.alice, 'GET', '/api/models?limit=1&offset=1')
    assert.equal((page.body.models as Model[]).length, 1)
    assert.equal(page.body.total, 2)
    assert.equal((page.body.models as Model[])[0]!.model, 'claude-sonnet')
    const none = await s.call(s.alice, 'GET', '/api/models?provider=Nobody')
    assert.deepEqual([none.body.models, none.body.total], [[], 0])
  })

  /** What the idp's registry says the agent's operator declared, read from the idp itself. */
  const idpDeclares = async (did: string) => {
    const res = await fetch(`${s.idp.url}/agents/${encodeURIComponent(did)}/profile.json`)
    if (res.status === 404) return []
    assert.equal(res.status, 200)
    const agent = ((await res.json()) as { agent: Record<string, string | undefined> | null }).agent
    return agent
      ? [
          {
            id: agent.model,
            version: agent.version ?? null,
            provider: agent.provider ?? null,
            declared_by: 'operator',
          },
        ]
      : []
  }

  it('the catalogue and the listings show each agent’s declared models, as the idp declares them', async () => {
    const search = await s.call(s.alice, 'GET', '/api/market/listings?limit=100')
    assert.equal(search.status, 200, search.text)
    const listings = search.body.listings as Array<{ id: string; agent_did: string; models: unknown[] }>
    assert.equal(listings.length, 4)
    for (const listing of listings)
      assert.deepEqual(listing.models, await idpDeclares(listing.agent_did), listing.id)
    const gpt = listings.find((l) => l.agent_did === declared.gpt)!
    assert.deepEqual(gpt.models, [
      { id: 'gpt-5', version: '2025-08', provider: 'OpenAI', declared_by: 'operator' },
    ])
    assert.deepEqual(listings.find((l) => l.agent_did === declared.none)!.models, [])
    const detail = await s.call(s.alice, 'GET', `/api/market/listings/${gpt.id}`)
    assert.deepEqual(detail.body.models, gpt.models)
    // the catalogue's agents (the built-in ones: their operator declared no model at the idp)
    const jobs = (await s.call(s.alice, 'GET', '/api/jobs')).body.jobs as Array<{
      agents: Array<{ did: string; models: unknown[] }>
    }>
    const agents = jobs.flatMap((j) => j.agents)
    assert.ok(agents.length > 0)
    for (const agent of agents) assert.deepEqual(agent.models, await idpDeclares(agent.did), agent.did)
  })

  it('keeps declarations a minute, then serves them while it refreshes them in the background', async () => {
    let clock = 0
    let reads = 0
    let idpDown = false
    const counted: typeof fetch = (input, init) => {
      reads += 1
      return idpDown ? Promise.reject(new Error('connection refused')) : fetch(input, init)
    }
    const declarations = new Declarations(s.idp.url, () => clock, counted)
    // an agent never read: the request waits for the idp, once however many ask
    const [first, again] = await Promise.all([
      declarations.of(declared.claude),
      declarations.of(declared.claude),
    ])
    assert.equal(first?.model, 'claude-sonnet')
    assert.equal(again, first)
    assert.equal(reads, 1)
    clock += 59_000
    assert.equal((await declarations.of(declared.claude))?.model, 'claude-sonnet')
    assert.equal(reads, 1, 'fresh: no read')
    // stale: answered at once from what was kept, refreshed in the background
    clock += 2_000
    const stale = declarations.of(declared.claude)
    assert.ok(declarations.refreshing(declared.claude), 'a refresh is under way')
    assert.equal((await stale)?.model, 'claude-sonnet')
    await declarations.refreshing(declared.claude)
    assert.equal(reads, 2)
    // an idp that does not answer: what was known is kept
    idpDown = true
    clock += 61_000
    assert.equal((await declarations.of(declared.claude))?.model, 'claude-sonnet')
    assert.equal((await declarations.refreshing(declared.claude))?.model, 'claude-sonnet')
    assert.equal(reads, 3)
    idpDown = false
    const models = await declarations.modelsOf([declared.claude, declared.none])
    assert.deepEqual(models.get(declared.none), [])
    assert.equal(models.get(declared.claude)?.[0]?.provider, 'Anthropic')
  })

  it('refuses bad input with 400', async () => {
    for (const q of ['limit=0', 'offset=-1', 'provider=', 'colour=red']) {
      const res = await s.call(s.alice, 'GET', `/api/models?${q}`)
      assert.equal(res.status, 400, `${q}: ${res.text}`)
      assert.ok(codeOf(res), q)
    }
  })
})

describe('rental web-tool and egress policies: versioned per engagement, enforced on tool-server calls', () => {
  let s: FullStack
  let engagement = ''
  let key: NotesKey
  const call = (
    method: string,
    path: string,
    body?: unknown,
    who = s.alice,
    headers?: Record<string, string>,
  ) => s.call(who, method, path, body, headers ? { headers } : {})
  const eventsOf = async (stream: string, type: string) =>
    (
      await sql<{ data: Record<string, unknown> }>`select data from rental_events
        where stream = ${stream} and type = ${type} order by stream_seq`.execute(s.db)
    ).rows.map((r) => r.data)

  before(async () => {
    s = await startFullStack()
    const did = await s.agentOf('job_notes')
    engagement = await s.hireAndSign(s.alice, 'job_notes', did, s.newClientKey())
    key = await newNotesKey(s)
  })
  after(async () => s?.close())

  it('web policy: none set, then versions with If-Match; a contradiction is 400', async () => {
    const first = await call('GET', `/api/engagements/${engagement}/web`)
    assert.equal(first.status, 200, first.text)
    assert.equal(first.body.version, 0)
    const policy = {
      allowed_domains: ['*.Example.com', 'docs.rs'],
      denied_domains: ['ads.example.com'],
      max_fetches_per_task: 20,
      max_bytes: 1_000_000,
    }
    const set = await call('POST', `/api/engagements/${engagement}/web`, policy)
    assert.equal(set.status, 200, set.text)
    assert.equal(set.body.version, 1)
    assert.deepEqual((set.body.policy as { allowed_domains: string[] }).allowed_domains, [
      '*.example.com',
      'docs.rs',
    ])
    const stale = await call('POST', `/api/engagements/${engagement}/web`, policy, s.alice, {
      'if-match': '"0"',
    })
    assert.equal(stale.status, 412, stale.text)
    const next = await call('POST', `/api/engagements/${engagement}/web`, policy, s.alice, {
      'if-match': '"1"',
    })
    assert.equal(next.body.version, 2)
    const both = await call('POST', `/api/engagements/${engagement}/web`, {
      ...policy,
      denied_domains: ['docs.rs'],
    })
    assert.equal(both.status, 400, both.text)
    assert.equal((await eventsOf(engagement, 'engagement.policy_changed')).length, 2)
  })

  it('refuses bad input with 400 and another organization’s engagement with 404', async () => {
    const bad: unknown[] = [
      { allow: [{ host: 'a b' }] },
      { allow: [{ host: 'x.com', ports: [0] }] },
      { allow: [{ host: 'x.com', ports: [70_000] }] },
      { allow: [{ host: 'x.com', ports: [] }] },
      { allow: [], extra: 1 },
      {},
    ]
    for (const body of bad) {
      const res = await call('POST', `/api/engagements/${engagement}/egress`, body)
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
    }
    const badWeb = await call('POST', `/api/engagements/${engagement}/web`, {
      allowed_domains: [],
      denied_domains: [],
      max_fetches_per_task: -1,
      max_bytes: null,
    })
    assert.equal(badWeb.status, 400, badWeb.text)
    const badMatch = await call('POST', `/api/engagements/${engagement}/egress`, { allow: [] }, s.alice, {
      'if-match': 'nope',
    })
    assert.equal(badMatch.status, 400, badMatch.text)
    for (const kind of ['web', 'egress']) {
      assert.equal(
        (await call('GET', `/api/engagements/${engagement}/${kind}`, undefined, s.bob)).status,
        404,
      )
      const other = await call('POST', `/api/engagements/${engagement}/${kind}`, { allow: [] }, s.bob)
      assert.ok([400, 404].includes(other.status), other.text)
      assert.equal((await call('GET', `/api/engagements/eng_nope/${kind}`)).status, 404)
    }
    const other = await call('POST', `/api/engagements/${engagement}/egress`, { allow: [] }, s.bob)
    assert.equal(other.status, 404, other.text)
  })

  it('an egress policy refuses a tool-server call to a host outside it, before connecting (403, recorded)', async () => {
    const url = new URL(key.mcp_url)
    // before a policy: the tool server is reached
    const open = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
      url: key.mcp_url,
      api_key: key.api_key,
    })
    assert.equal(open.status, 200, open.text)
    const set = await call('POST', `/api/engagements/${engagement}/egress`, {
      allow: [{ host: '*.tools.example.com', ports: [443] }],
    })
    assert.equal(set.status, 200, set.text)
    for (const path of ['connect/preview', 'connect']) {
      const refused = await call('POST', `/api/engagements/${engagement}/${path}`, {
        url: key.mcp_url,
        api_key: key.api_key,
      })
      assert.equal(refused.status, 403, refused.text)
      assert.equal(codeOf(refused), 'egress_refused')
      assert.match(
        (refused.body.error as { message: string }).message,
        /outside the engagement's egress allow-list/,
      )
    }
    const connections = await call('GET', `/api/engagements/${engagement}/connect/connections`)
    assert.equal((connections.body.connections as unknown[] | undefined)?.length ?? 0, 0, connections.text)
    const refusals = await eventsOf(engagement, 'egress.refused')
    assert.equal(refusals.length, 2)
    assert.equal(refusals[0]!.host, url.host)
    // the host allowed but not its port: refused; host and port allowed: bound
    await call('POST', `/api/engagements/${engagement}/egress`, {
      allow: [{ host: url.hostname, ports: [1] }],
    })
    const port = await call('POST', `/api/engagements/${engagement}/connect/preview`, {
      url: key.mcp_url,
      api_key: key.api_key,
    })
    assert.equal(port.status, 403, port.text)
    await call('POST', `/api/engagements/${engagement}/egress`, {
      allow: [{ host: url.hostname, ports: [Number(url.port)] }],
    })
    const bound = await call('POST', `/api/engagements/${engagement}/connect`, {
      url: key.mcp_url,
      api_key: key.api_key,
    })
    assert.equal(bound.status, 201, bound.text)
    // the policy narrowed again: the agent's tool call is refused before any connection
    await call('POST', `/api/engagements/${engagement}/egress`, {
      allow: [{ host: 'tools.example.com' }],
    })
    // the task held for approval stays running: its credential is live
    const held = await call('POST', `/api/engagements/${engagement}/config`, {
      approval: { mode: 'above_price', above_fils: 0 },
    })
    assert.equal(held.status, 200, held.text)
    const posted = await call('POST', '/api/tasks', { engagement_id: engagement, text: 'note' })
    const taskId = (posted.body.task as { id: string }).id
    const token = await storeToolCredential(s, taskId, engagement)
    const res = await fetch(`${s.rental.url}/api/connect/calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'notes.list' }),
    })
    const body = (await res.json()) as { error?: { code: string } }
    assert.equal(res.status, 403, JSON.stringify(body))
    assert.equal(body.error?.code, 'egress_refused')
  })
})
