import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { type Answer, type Client, type FullStack, startFullStack } from '../support/full-stack.ts'

interface Incident {
  id: string
  kind: string
  state: string
  severity: string
  summary: string
  provider_org_id: string | null
  your_roles: string[]
  resolution: string | null
  time_to_resolve_s: number | null
  notes?: Array<{ author: string; text: string }>
}
interface Status {
  incidents: Array<{
    kind: string
    severity: string
    summary: string
    impact?: string
    agent_did?: string
    since: string
  }>
}

const codeOf = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code
const messageOf = (a: Answer) => (a.body.error as { message?: string } | undefined)?.message ?? ''
const incidentOf = (a: Answer) => a.body as unknown as Incident

describe('rental incidents: reported, noted by reporter, provider and operators, resolved once, open ones on /status', () => {
  let s: FullStack
  let operator: Client
  let provider: Client
  let stranger: Client
  let agentDid = ''
  let engagementId = ''
  const status = async () => (await (await fetch(`${s.rental.url}/status`)).json()) as Status
  const report = (who: Client, body: Record<string, unknown>) => s.call(who, 'POST', '/api/incidents', body)

  before(async () => {
    // bob (the demo user as another client) is the one operator
    s = await startFullStack({ RENTAL_OPERATORS: 'another-client' })
    operator = s.bob
    provider = await s.signInWith('provider@incidents.example')
    stranger = await s.signInWith('stranger@incidents.example')
    agentDid = await s.agentOf('job_summary')
    // the agent is published by the provider's organization (a third party, not the platform)
    await s.db
      .updateTable('agents')
      .set({ provider_org_id: provider.me.organization.id })
      .where('did', '=', agentDid)
      .execute()
    engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
  })
  after(async () => s?.close())

  it('a client’s incident: seen and noted by its provider and operators, 404 to others, resolved once, off /status', async () => {
    const made = await report(s.alice, {
      severity: 'sev2',
      summary: 'Summaries arrive truncated',
      impact: 'Half of today’s summaries are cut at 200 words; Acme Trading’s reports are late.',
      engagement_id: engagementId,
    })
    assert.equal(made.status, 201, made.text)
    const incident = incidentOf(made)
    assert.deepEqual(
      [incident.kind, incident.state, incident.provider_org_id, incident.your_roles],
      ['client', 'open', provider.me.organization.id, ['reporter']],
    )
    // the event the insurance claims read
    const { rows } = await sql<{ type: string; data: Record<string, unknown> }>`
      select type, data from rental_events where subjects->>'incident_id' = ${incident.id} order by seq`.execute(
      s.db,
    )
    assert.equal(rows[0]!.type, 'incident.reported')
    assert.deepEqual(
      [rows[0]!.data.incident_id, rows[0]!.data.engagement_id, rows[0]!.data.agent_did],
      [incident.id, engagementId, agentDid],
    )
    // the public status: the agent's severity and summary, no client, no impact
    const open = (await status()).incidents.filter((i) => i.summary === 'Summaries arrive truncated')
    assert.deepEqual(open, [
      {
        kind: 'agent',
        agent_did: agentDid,
        severity: 'sev2',
        summary: 'Summaries arrive truncated',
        since: open[0]!.since,
      },
    ])
    const statusText = JSON.stringify(await status())
    assert.ok(!statusText.includes('Acme') && !statusText.includes(s.alice.me.organization.id))
    const page = await (await fetch(`${s.rental.url}/status.html?lang=ar`)).text()
    assert.match(page, /dir="rtl"/)
    assert.match(page, /Summaries arrive truncated/)
    assert.match(page, /الحوادث المفتوحة/)
    // the provider and an operator see it and add notes; a stranger gets 404 everywhere
    const seen = await s.call(provider, 'GET', `/api/incidents/${incident.id}`)
    assert.equal(seen.status, 200, seen.text)
    assert.deepEqual(incidentOf(seen).your_roles, ['provider'])
    for (const [who, text] of [
      [provider, 'We found the cut-off: a token limit. Fix deploying.'],
      [operator, 'Platform side checked: no rental fault.'],
      [s.alice, 'Confirmed better for new tasks.'],
    ] as const) {
      const noted = await s.call(who, 'POST', `/api/incidents/${incident.id}/note`, { text })
      assert.equal(noted.status, 200, noted.text)
    }
    for (const [method, path, body] of [
      ['GET', `/api/incidents/${incident.id}`, undefined],
      ['POST', `/api/incidents/${incident.id}/note`, { text: 'Me too?' }],
      ['POST', `/api/incidents/${incident.id}/resolve`, { resolution: 'Not mine to resolve.' }],
    ] as const) {
      const other = await s.call(stranger, method, path, body)
      assert.deepEqual([other.status, codeOf(other)], [404, 'incident_not_found'], `${method} ${path}`)
    }
    const strangerList = await s.call(stranger, 'GET', '/api/incidents')
    assert.ok(!(strangerList.body.incidents as Incident[]).some((i) => i.id === incident.id))
    for (const who of [s.alice, provider, operator]) {
      const list = await s.call(who, 'GET', '/api/incidents?state=open')
      assert.ok((list.body.incidents as Incident[]).some((i) => i.id === incident.id))
    }
    const resolved = await s.call(provider, 'POST', `/api/incidents/${incident.id}/resolve`, {
      resolution: 'Token limit raised; truncated tasks re-run.',
    })
    assert.equal(resolved.status, 200, resolved.text)
    const done = incidentOf(resolved)
    assert.equal(done.state, 'resolved')
    assert.ok(done.time_to_resolve_s !== null && done.time_to_resolve_s >= 0)
    assert.deepEqual(
      done.notes!.map((n) => n.author),
      ['provider', 'operator', 'reporter'],
    )
    const again = await s.call(s.alice, 'POST', `/api/incidents/${incident.id}/resolve`, {
      resolution: 'Again.',
    })
    assert.deepEqual([again.status, codeOf(again)], [409, 'incident_state'])
    assert.match(messageOf(again), /resolved/)
    const late = await s.call(s.alice, 'POST', `/api/incidents/${incident.id}/note`, { text: 'Late note.' })
    assert.deepEqual([late.status, codeOf(late)], [409, 'incident_state'])
    assert.ok(!(await status()).incidents.some((i) => i.summary === 'Summaries arrive truncated'))
    const { rows: types } = await sql<{ type: string }>`
      select type from rental_events where subjects->>'incident_id' = ${incident.id} order by seq`.execute(
      s.db,
    )
    assert.deepEqual(
      types.map((r) => r.type),
      ['incident.reported', 'incident.noted', 'incident.noted', 'incident.noted', 'incident.resolved'],
    )
  })

  it('platform incidents: operators only report and resolve them; shown with their impact; every member reads them', async () => {
    const byClient = await report(s.alice, { severity: 'sev1', summary: 'Down', impact: 'Everything.' })
    assert.deepEqual([byClient.status, codeOf(byClient)], [400, 'invalid_request'])
    const made = await report(operator, {
      severity: 'sev1',
      summary: 'Ledger delivery delayed',
      impact: 'Receipts reach the ledger up to 10 minutes late.',
    })
    assert.equal(made.status, 201, made.text)
    const incident = incidentOf(made)
    assert.deepEqual([incident.kind, incident.your_roles], ['platform', ['operator']])
    const shown = (await status()).incidents.find((i) => i.summary === 'Ledger delivery delayed')
    assert.deepEqual(
      [shown?.kind, shown?.severity, shown?.impact],
      ['platform', 'sev1', 'Receipts reach the ledger up to 10 minutes late.'],
    )
    const html = await (await fetch(`${s.rental.url}/status.html`)).text()
    assert.match(html, /Ledger delivery delayed/)
    const read = await s.call(stranger, 'GET', `/api/incidents/${incident.id}`)
    assert.equal(read.status, 200, read.text)
    const byStranger = await s.call(stranger, 'POST', `/api/incidents/${incident.id}/resolve`, {
      resolution: 'Looks fine to me.',
    })
    assert.deepEqual([byStranger.status, codeOf(byStranger)], [403, 'forbidden'])
    // concurrent resolves settle on one
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        s.call(operator, 'POST', `/api/incidents/${incident.id}/resolve`, { resolution: 'Backlog drained.' }),
      ),
    )
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409, 409])
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from rental_events where type = 'incident.resolved' and subjects->>'incident_id' = ${incident.id}`.execute(
      s.db,
    )
    assert.equal(Number(rows[0]!.n), 1)
  })

  it('bad input is 400, another organization’s engagement 404, an agent never hired 404', async () => {
    const good = { severity: 'sev3', summary: 'Slow', impact: 'Tasks take a minute.' }
    for (const body of [
      { ...good, severity: 'sev5' },
      { ...good, summary: '' },
      { ...good, summary: 'x'.repeat(201) },
      { ...good, impact: 'x'.repeat(2001) },
      { ...good, engagement_id: engagementId, extra: 1 },
      { severity: 'sev3', summary: 'Slow' },
      { ...good, engagement_id: 42 },
    ]) {
      const bad = await report(s.alice, body)
      assert.equal(bad.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${bad.text}`)
    }
    const blank = await report(s.alice, { ...good, summary: '   ', engagement_id: engagementId })
    assert.deepEqual([blank.status, codeOf(blank)], [400, 'invalid_request'])
    const theirs = await report(stranger, { ...good, engagement_id: engagementId })
    assert.deepEqual([theirs.status, codeOf(theirs)], [404, 'engagement_not_found'])
    const neverHired = await report(stranger, { ...good, agent_did: agentDid })
    assert.deepEqual([neverHired.status, codeOf(neverHired)], [404, 'agent_not_found'])
    const badDid = await report(s.alice, { ...good, agent_did: 'did:web:example.com' })
    assert.deepEqual([badDid.status, codeOf(badDid)], [400, 'invalid_agent_did'])
    const mismatch = await report(s.alice, {
      ...good,
      engagement_id: engagementId,
      agent_did: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
    })
    assert.deepEqual([mismatch.status, codeOf(mismatch)], [400, 'invalid_request'])
    // by agent alone: the organization hired it
    const byAgent = await report(s.alice, { ...good, agent_did: agentDid })
    assert.equal(byAgent.status, 201, byAgent.text)
    const id = incidentOf(byAgent).id
    for (const [path, body] of [
      [`/api/incidents/${id}/note`, { text: '' }],
      [`/api/incidents/${id}/note`, { text: 'x'.repeat(2001) }],
      [`/api/incidents/${id}/note`, {}],
      [`/api/incidents/${id}/resolve`, { resolution: 7 }],
      [`/api/incidents/${id}/resolve`, { resolution: 'ok', extra: true }],
    ] as const) {
      const bad = await s.call(s.alice, 'POST', path, body)
      assert.equal(bad.status, 400, `${path} ${JSON.stringify(body).slice(0, 40)}: ${bad.text}`)
    }
    const list = await s.call(s.alice, 'GET', '/api/incidents?state=closed')
    assert.equal(list.status, 400)
    const unknown = await s.call(s.alice, 'GET', '/api/incidents/inc_nope')
    assert.deepEqual([unknown.status, codeOf(unknown)], [404, 'incident_not_found'])
  })
})
