import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { Sealer } from '@svc/kit'
import { type LedgerReceipt, receiptsAbout } from '@svc/testing/ledger'
import { type Client, type FullStack, startFullStack, WRITER } from '../support/full-stack.ts'

type Body = Record<string, unknown>
interface Kyb {
  id: string
  state: string
  domain: string
  domain_verified: boolean
  problems: string[]
  publish_at: string | null
  owner_document: Record<string, unknown> | null
  receipt_id: string | null
  review: { decision: string; reason: string | null } | null
}

const business = (domain: string) => ({
  domain,
  entity_name: 'Acme Trading LLC',
  jurisdiction: 'AE',
  registration: 'DED-123456',
})

describe('rental onboarding: business checks through the real idp, operator review, agent screening, gates', () => {
  let s: FullStack
  let web: Server
  let ops: Client
  let agentDid = ''
  /** What each domain publishes as its owner document (the idp fetches it from this server). */
  const published = new Map<string, unknown>()

  before(async () => {
    web = createServer((req, res) => {
      const domain = decodeURIComponent(req.url!.split('/')[1]!)
      const document = published.get(domain)
      if (!document) res.writeHead(404).end()
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document))
    })
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
    s = await startFullStack(
      // production's rules: a check is required, for any paid hire (above 0 fils)
      {
        RENTAL_OPERATORS: 'ops@onboard.example',
        RENTAL_KYB_REQUIRED: 'true',
        RENTAL_KYB_HIRE_LIMIT_FILS: '0',
      },
      {
        idpEnv: {
          IDP_FETCH_ALLOW_PRIVATE: 'true',
          IDP_OWNER_DOCUMENT_URL: `http://127.0.0.1:${(web.address() as AddressInfo).port}/{domain}/svc-owner.json`,
        },
      },
    )
    ops = await s.signInWith('ops@onboard.example')
    agentDid = await s.agentOf('job_summary')
  })
  after(async () => {
    await s.close()
    web.close()
  })

  const hire = (who: Client) =>
    s.call(who, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: agentDid,
      client_did: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
    })

  it('starts with no check: a paid hire is refused (403 kyb_required) while checks are required', async () => {
    const status = await s.call(s.alice, 'GET', '/api/onboarding')
    assert.equal(status.status, 200, status.text)
    assert.equal(status.body.kyb, null)
    assert.equal(status.body.kyb_required, true)
    assert.equal(status.body.kyb_approved, false)
    assert.equal(status.body.hire_limit_fils, 0)
    const refused = await hire(s.alice)
    assert.equal(refused.status, 403, refused.text)
    assert.equal((refused.body.error as Body).code, 'kyb_required')
  })

  it('refuses malformed business details (400) and an unverified check’s approval (409 naming awaiting_domain)', async () => {
    for (const body of [
      { ...business('acme.example.com'), domain: 'not a domain' },
      { ...business('acme.example.com'), entity_name: '   ' },
      { domain: 'acme.example.com', entity_name: 'Acme' },
      { ...business('acme.example.com'), extra: true },
    ]) {
      const res = await s.call(s.alice, 'POST', '/api/onboarding/kyb', body)
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
    }
    const submitted = await s.call(s.alice, 'POST', '/api/onboarding/kyb', business('Acme.Example.com'))
    assert.equal(submitted.status, 200, submitted.text)
    const kyb = submitted.body as unknown as Kyb
    assert.equal(kyb.state, 'awaiting_domain')
    assert.equal(kyb.domain, 'acme.example.com')
    assert.equal(kyb.domain_verified, false)
    assert.ok(kyb.problems.length > 0)
    assert.match(kyb.publish_at!, /acme\.example\.com\/svc-owner\.json$/)
    assert.equal(kyb.owner_document!.domain, 'acme.example.com')
    const early = await s.call(ops, 'POST', `/api/onboarding/kyb/${kyb.id}/review`, { decision: 'approve' })
    assert.equal(early.status, 409, early.text)
    assert.equal((early.body.error as Body).code, 'kyb_state')
    assert.match((early.body.error as Body).message as string, /awaiting_domain/)
  })

  it('verifies the domain once it publishes the owner document; an operator approves; the gate opens', async () => {
    const first = (await s.call(s.alice, 'GET', '/api/onboarding')).body.kyb as Kyb
    published.set('acme.example.com', first.owner_document)
    const again = await s.call(s.alice, 'POST', '/api/onboarding/kyb', business('acme.example.com'))
    assert.equal(again.status, 200, again.text)
    const kyb = again.body as unknown as Kyb
    assert.equal(kyb.id, first.id, 'the open check is checked again, not a new one')
    assert.equal(kyb.state, 'pending_review')
    assert.equal(kyb.domain_verified, true)
    assert.deepEqual(kyb.problems, [])
    // pending review: no new submission
    const twice = await s.call(s.alice, 'POST', '/api/onboarding/kyb', business('acme.example.com'))
    assert.equal(twice.status, 409, twice.text)
    assert.match((twice.body.error as Body).message as string, /pending_review/)
    // the review: another organization's member finds nothing; alice (not an operator) is refused
    const bobs = await s.call(s.bob, 'POST', `/api/onboarding/kyb/${kyb.id}/review`, { decision: 'approve' })
    assert.equal(bobs.status, 404, bobs.text)
    const own = await s.call(s.alice, 'POST', `/api/onboarding/kyb/${kyb.id}/review`, { decision: 'approve' })
    assert.equal(own.status, 403, own.text)
    const noReason = await s.call(ops, 'POST', `/api/onboarding/kyb/${kyb.id}/review`, { decision: 'reject' })
    assert.equal(noReason.status, 400, noReason.text)
    assert.equal((noReason.body.error as Body).code, 'reason_required')
    const unknown = await s.call(ops, 'POST', '/api/onboarding/kyb/kyb_nope/review', { decision: 'approve' })
    assert.equal(unknown.status, 404, unknown.text)
    const approved = await s.call(ops, 'POST', `/api/onboarding/kyb/${kyb.id}/review`, {
      decision: 'approve',
    })
    assert.equal(approved.status, 200, approved.text)
    assert.equal((approved.body as unknown as Kyb).state, 'approved')
    const replay = await s.call(ops, 'POST', `/api/onboarding/kyb/${kyb.id}/review`, {
      decision: 'reject',
      reason: 'late',
    })
    assert.equal(replay.status, 409, replay.text)
    assert.match((replay.body.error as Body).message as string, /approved/)
    const status = await s.call(s.alice, 'GET', '/api/onboarding')
    assert.equal(status.body.kyb_approved, true)
    // the tenant console's organization view shows the same (GET /v1/org)
    const org = await s.call(s.alice, 'GET', '/v1/org')
    assert.equal(org.status, 200, org.text)
    const onboarding = org.body.onboarding as { state: string; steps: Array<{ name: string; done: boolean }> }
    assert.equal(onboarding.state, 'approved')
    assert.ok(onboarding.steps.find((step) => step.name === 'business_check_approved')?.done)
    // the gate opens: alice hires
    const hired = await hire(s.alice)
    assert.equal(hired.status, 200, hired.text)
    // bob still has no check
    assert.equal((await hire(s.bob)).status, 403)

    // receipted: the submission and the review are on the ledger, the reason never in clear
    const receipts = await receiptsAbout({ url: s.ledger.url, writer: WRITER }, kyb.id, (r) => r.length >= 3)
    const types = receipts.map((r: LedgerReceipt) => r.receipt.type)
    assert.deepEqual(types.filter((t) => t === 'kyb.submitted').length, 2)
    const review = receipts.find((r) => r.receipt.type === 'kyb.reviewed')!
    assert.equal(review.receipt.data.decision, 'approve')
    assert.equal(review.receipt.data.org_id, s.alice.me.organization.id)
    // and events
    const audit = await s.call(s.alice, 'GET', '/api/audit?type=onboarding.kyb_reviewed')
    assert.equal(audit.status, 200, audit.text)
    const events = audit.body.events as Array<{ actor: { type: string }; data: Body }>
    assert.equal(events.length, 1)
    assert.equal(events[0]!.actor.type, 'operator')
  })

  it('a rejection keeps its reason (a hash on the ledger); the organization may submit again', async () => {
    const submitted = await s.call(s.bob, 'POST', '/api/onboarding/kyb', business('bob.example.org'))
    assert.equal(submitted.status, 200, submitted.text)
    const id = (submitted.body as unknown as Kyb).id
    const rejected = await s.call(ops, 'POST', `/api/onboarding/kyb/${id}/review`, {
      decision: 'reject',
      reason: 'The registration number is not on the register.',
    })
    assert.equal(rejected.status, 200, rejected.text)
    assert.deepEqual((rejected.body as unknown as Kyb).review, {
      decision: 'reject',
      reason: 'The registration number is not on the register.',
      reviewed_at: (rejected.body.review as Body).reviewed_at,
    })
    const [receipt] = await receiptsAbout({ url: s.ledger.url, writer: WRITER }, id, (r) =>
      r.some((x) => x.receipt.type === 'kyb.reviewed'),
    ).then((r) => r.filter((x) => x.receipt.type === 'kyb.reviewed'))
    assert.match(receipt!.receipt.data.reason_sha256 as string, /^sha256:[0-9a-f]{64}$/)
    assert.ok(!JSON.stringify(receipt).includes('register'))
    const again = await s.call(s.bob, 'POST', '/api/onboarding/kyb', business('bob.example.org'))
    assert.equal(again.status, 200, again.text)
    assert.notEqual((again.body as unknown as Kyb).id, id)
  })

  it('concurrent submissions answer 200 or 409, never 5XX, and leave one open check', async () => {
    const carol = await s.signInWith('carol@onboard.example')
    const answers = await Promise.all(
      [1, 2, 3].map(() => s.call(carol, 'POST', '/api/onboarding/kyb', business('carol.example.net'))),
    )
    for (const a of answers) assert.ok(a.status === 200 || a.status === 409, `${a.status} ${a.text}`)
    const { rows } = await s.db
      .selectFrom('rental_kyb')
      .select(['id', 'state'])
      .where('org_id', '=', carol.me.organization.id)
      .execute()
      .then((rows) => ({ rows }))
    assert.equal(rows.length, 1)
  })

  it('screens an agent through the idp: the deny list hits, the idp’s kya.screening receipt is named', async () => {
    const clear = await s.call(s.alice, 'POST', `/api/onboarding/kya/${encodeURIComponent(agentDid)}`, {})
    assert.equal(clear.status, 200, clear.text)
    assert.equal(clear.body.ok, true)
    assert.deepEqual(clear.body.hits, [])
    assert.match(clear.body.idp_receipt as string, /^[A-Za-z0-9+/=_-]{40,}$/)
    // the platform denies the agent at the idp (its own organization's deny list)
    const row = await s.db.selectFrom('idp_org_keys').selectAll().executeTakeFirstOrThrow()
    const key = new Sealer(s.rental.ctx.config.encryptionKey)
      .open(row.api_key_sealed, `idp-org:${row.organization_id}`)
      .toString('utf8')
    const denied = await fetch(`${s.idp.url}/orgs/me`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_deny_list: [agentDid] }),
    })
    assert.equal(denied.status, 200, await denied.text())
    const hit = await s.call(s.alice, 'POST', `/api/onboarding/kya/${encodeURIComponent(agentDid)}`, {
      owner: 'org_platform',
    })
    assert.equal(hit.status, 200, hit.text)
    assert.equal(hit.body.ok, false)
    assert.deepEqual(hit.body.hits, [agentDid])
    assert.notEqual(hit.body.idp_receipt, clear.body.idp_receipt)
    const status = await s.call(s.alice, 'GET', '/api/onboarding')
    assert.deepEqual(
      (status.body.kya as Body[]).map((k) => k.ok),
      [false, true],
    )
    // bob sees none of alice's screenings
    assert.deepEqual((await s.call(s.bob, 'GET', '/api/onboarding')).body.kya, [])
    const audit = await s.call(s.alice, 'GET', '/api/audit?type=onboarding.kya_screened')
    assert.equal((audit.body.events as Body[]).length, 2)
    for (const bad of ['not-a-did', 'did:KEY:z6Mk']) {
      const res = await s.call(s.alice, 'POST', `/api/onboarding/kya/${encodeURIComponent(bad)}`, {})
      assert.equal(res.status, 400, res.text)
    }
    const surrogate = await s.call(s.alice, 'POST', `/api/onboarding/kya/${encodeURIComponent(agentDid)}`, {
      owner: 'x\udfffy',
    })
    assert.equal(surrogate.status, 400, surrogate.text)
    const extra = await s.call(s.alice, 'POST', `/api/onboarding/kya/${encodeURIComponent(agentDid)}`, {
      x: 1,
    })
    assert.equal(extra.status, 400, extra.text)
  })

  it('a viewer reads the status but submits nothing (403 naming onboarding:write)', async () => {
    const invited = await s.call(s.alice, 'POST', '/api/org/members', {
      email: 'viewer@onboard.example',
      role: 'viewer',
    })
    assert.equal(invited.status, 201, invited.text)
    const viewer = await s.signInWith('viewer@onboard.example')
    assert.equal((await s.call(viewer, 'GET', '/api/onboarding')).status, 200)
    const refused = await s.call(viewer, 'POST', '/api/onboarding/kyb', business('viewer.example.com'))
    assert.equal(refused.status, 403, refused.text)
    assert.match(refused.text, /onboarding:write/)
  })
})
