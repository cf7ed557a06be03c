import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { type Answer, type FullStack, startFullStack } from '../support/full-stack.ts'

interface Money {
  amount_fils: number
  currency: string
  display: string
}
interface Listing {
  id: string
  provider_org_id: string
  agent_did: string
  title: string
  tags: string[]
  languages: string[]
  price: Money
  package_price: Money | null
  availability: { state: string; max_concurrency: number | null; until: string | null }
  rank?: number
}

describe('the market: listings published, searched (ranked), made unavailable, shown on /market', () => {
  let stack: FullStack
  let summaryDid: string
  let invoiceDid: string
  let digest: Listing
  let checks: Listing

  const code = (res: Answer) => (res.body.error as { code?: string } | undefined)?.code
  const publish = async (body: Record<string, unknown>) => {
    const res = await stack.call(stack.alice, 'POST', '/api/market/listings', body)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as Listing
  }
  const search = async (query: string) => {
    const res = await stack.call(stack.alice, 'GET', `/api/market/listings${query}`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as { listings: Listing[]; total: number; limit: number }
  }
  const ids = (listings: Listing[]) => listings.map((l) => l.id)

  before(async () => {
    // alice and bob (the demo user, demo@svc.local) are operators: they publish the platform's built-in agents
    stack = await startFullStack({ RENTAL_OPERATORS: 'demo@svc.local' })
    summaryDid = await stack.agentOf('job_summary')
    invoiceDid = await stack.agentOf('job_invoice_check')
    digest = await publish({
      agent_did: summaryDid,
      title: 'Ledger digest',
      description: 'Short summaries of long documents, in plain words.',
      skills: ['summarisation'],
      tags: ['Writing', 'finance'],
      languages: ['en', 'ar'],
      price_fils: 6000,
      package_price_fils: 50_000,
      sla: { response_seconds: 60 },
    })
    checks = await publish({
      agent_did: invoiceDid,
      title: 'Invoice checks',
      description: 'Reads invoices against the ledger and flags what does not add up.',
      skills: ['auditing'],
      tags: ['finance'],
      languages: ['en'],
      price_fils: 15_000,
    })
  })
  after(async () => stack?.close())

  it('publishes a listing for the platform’s agent, money shown as money, with listing.published', async () => {
    assert.equal(digest.provider_org_id, 'org_platform')
    assert.equal(digest.agent_did, summaryDid)
    assert.deepEqual(digest.tags, ['writing', 'finance'])
    assert.deepEqual(digest.price, { amount_fils: 6000, currency: 'AED', display: 'AED\u00a060.00' })
    assert.equal(digest.package_price?.amount_fils, 50_000)
    assert.equal(digest.availability.state, 'available')
    const read = await stack.call(stack.alice, 'GET', `/api/market/listings/${digest.id}?lang=ar`)
    assert.equal(read.status, 200, read.text)
    const price = (read.body as unknown as Listing).price
    assert.equal(price.amount_fils, 6000)
    assert.match(price.display, /د\.إ/)
    assert.match(price.display, /٦٠/)
    // every member of any organization reads the market
    assert.equal((await stack.call(stack.bob, 'GET', `/api/market/listings/${digest.id}`)).status, 200)
    // the platform's listings' events are the platform organization's
    const logged = await stack.db
      .selectFrom('rental_events')
      .select(['type', 'subjects', 'org_id'])
      .where('type', '=', 'listing.published')
      .execute()
    assert.deepEqual(
      logged.map((e) => [e.org_id, (e.subjects as Record<string, string>).listing_id]).sort(),
      [
        ['org_platform', digest.id],
        ['org_platform', checks.id],
      ].sort(),
    )
  })

  it('publishing again for the same agent updates the listing (listing.updated)', async () => {
    const again = await publish({
      agent_did: invoiceDid,
      title: 'Invoice checks',
      description: 'Reads invoices against the ledger and flags what does not add up.',
      skills: ['auditing'],
      tags: ['finance', 'audit'],
      languages: ['en'],
      price_fils: 12_000,
    })
    assert.equal(again.id, checks.id)
    assert.equal(again.price.amount_fils, 12_000)
    checks = again
    const updated = await stack.db
      .selectFrom('rental_events')
      .select('subjects')
      .where('type', '=', 'listing.updated')
      .execute()
    assert.deepEqual(
      updated.map((e) => (e.subjects as Record<string, string>).listing_id),
      [checks.id],
    )
  })

  it('ranks a title match above a description-only match; filters by tag, price, language; sorts; pages', async () => {
    const ranked = await search('?q=ledger')
    assert.deepEqual(ids(ranked.listings), [digest.id, checks.id])
    assert.ok(ranked.listings[0]!.rank! > ranked.listings[1]!.rank!)
    assert.deepEqual(ids((await search('?q=auditing')).listings), [checks.id], 'skills are searched')
    assert.deepEqual(ids((await search('?q=nothing%20like%20this')).listings), [])
    assert.deepEqual(ids((await search('?tag=writing')).listings), [digest.id])
    assert.deepEqual(ids((await search('?tag=FINANCE&sort=price')).listings), [digest.id, checks.id])
    assert.deepEqual(ids((await search('?min_price=10000')).listings), [checks.id])
    assert.deepEqual(ids((await search('?max_price=10000')).listings), [digest.id])
    assert.deepEqual(ids((await search('?language=ar')).listings), [digest.id])
    const paged = await search('?sort=price&limit=1&offset=1')
    assert.deepEqual(ids(paged.listings), [checks.id])
    assert.equal(paged.total, 2)
  })

  it('availability: limited, unavailable (hiring is 409), available again; another organization’s listing is 404', async () => {
    const set = (body: unknown, who = stack.alice) =>
      stack.call(who, 'POST', `/api/market/listings/${digest.id}/availability`, body)
    const limited = await set({ state: 'limited', max_concurrency: 2 })
    assert.equal(limited.status, 200, limited.text)
    assert.deepEqual((limited.body as unknown as Listing).availability, {
      state: 'limited',
      max_concurrency: 2,
      until: null,
    })
    const off = await set({ state: 'unavailable', until: '2099-01-01T00:00:00Z' })
    assert.equal(off.status, 200, off.text)
    assert.equal((off.body as unknown as Listing).availability.until, '2099-01-01T00:00:00.000Z')
    assert.deepEqual(ids((await search('?availability=unavailable')).listings), [digest.id])
    const hire = await stack.call(stack.alice, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: summaryDid,
      client_did: didKeyFromEd25519(stack.newClientKey().publicKey),
    })
    assert.equal(hire.status, 409, hire.text)
    assert.equal(code(hire), 'listing_unavailable')
    // another organization (not an operator) cannot change it: 404
    const bobs = await set({ state: 'available' }, await stack.signInWith('dave@market.example'))
    assert.equal(bobs.status, 404, bobs.text)
    assert.equal(code(bobs), 'listing_not_found')
    const on = await set({ state: 'available' })
    assert.equal(on.status, 200, on.text)
    assert.equal((on.body as unknown as Listing).availability.state, 'available')
    const changes = await stack.db
      .selectFrom('rental_events')
      .select('data')
      .where('type', '=', 'listing.availability_changed')
      .orderBy('seq')
      .execute()
    assert.deepEqual(
      changes.map((e) => (e.data as { to: string }).to),
      ['limited', 'unavailable', 'available'],
    )
  })

  it('another organization cannot publish for an agent it does not provide: 403', async () => {
    // a new person's organization (the demo user's clients, alice and bob, are both operators)
    const carol = await stack.signInWith('carol@market.example')
    const res = await stack.call(carol, 'POST', '/api/market/listings', {
      agent_did: summaryDid,
      title: 'Not mine',
      description: 'An agent carol’s organization does not provide.',
      price_fils: 100,
    })
    assert.equal(res.status, 403, res.text)
    assert.equal(code(res), 'forbidden')
    assert.equal((await search('?q=mine')).total, 0)
  })

  it('bad input: 400 naming the field; unknown listing 404', async () => {
    const good = { agent_did: summaryDid, title: 'T', description: 'D', price_fils: 100 }
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ ...good, price_fils: 0 }, 'price_fils'],
      [{ ...good, price_fils: 1.5 }, 'price_fils'],
      [{ ...good, price_fils: 2 ** 53 }, 'price_fils'],
      [{ ...good, title: '' }, 'title'],
      [{ ...good, title: '   ' }, 'title'],
      [{ ...good, agent_did: 'did:web:example.com' }, 'agent_did'],
      [{ ...good, languages: ['not a language'] }, 'languages'],
      [{ ...good, extra: 1 }, 'extra'],
    ]
    for (const [body, field] of bad) {
      const res = await stack.call(stack.alice, 'POST', '/api/market/listings', body)
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
      assert.match(res.text, new RegExp(field === 'agent_did' ? 'agent_did|DID' : field), res.text)
    }
    for (const q of [
      '?min_price=-1',
      '?sort=cheapest',
      '?availability=maybe',
      '?limit=100000',
      '?min_price=9&max_price=1',
    ])
      assert.equal((await stack.call(stack.alice, 'GET', `/api/market/listings${q}`)).status, 400, q)
    const avail = `/api/market/listings/${digest.id}/availability`
    for (const body of [
      { state: 'limited' },
      { state: 'limited', max_concurrency: 0 },
      { state: 'sometimes' },
      { state: 'unavailable', until: 'soon' },
    ])
      assert.equal((await stack.call(stack.alice, 'POST', avail, body)).status, 400, JSON.stringify(body))
    const missing = await stack.call(stack.alice, 'GET', '/api/market/listings/lst_nothing')
    assert.equal(missing.status, 404)
    assert.equal(code(missing), 'listing_not_found')
  })

  it('the public /market page lists the listings, searched with ?q=, in English and Arabic, escaped', async () => {
    await stack.call(stack.alice, 'POST', '/api/market/listings', {
      agent_did: invoiceDid,
      title: 'Invoice checks <script>alert(1)</script>',
      description: 'Reads invoices against the ledger & flags what does not add up.',
      skills: ['auditing'],
      tags: ['finance'],
      price_fils: 12_000,
    })
    const page = async (query: string) => {
      const res = await fetch(`${stack.rental.url}/market${query}`)
      assert.equal(res.status, 200)
      return res.text()
    }
    const en = await page('?q=digest')
    assert.match(en, /Ledger digest/)
    assert.match(en, /AED\u00a060\.00/)
    assert.doesNotMatch(en, /Invoice checks/)
    assert.match(en, /name="q" value="digest"/)
    const all = await page('?q=ledger')
    assert.ok(all.indexOf('Ledger digest') < all.indexOf('Invoice checks'), 'ranked')
    assert.doesNotMatch(all, /<script>/)
    assert.match(all, /&lt;script&gt;/)
    assert.match(all, /ledger &amp; flags/)
    const ar = await page('?lang=ar&q=%22%3E%3Cb%3E')
    assert.match(ar, /dir="rtl"/)
    assert.match(ar, /لا توجد عروض مطابقة/)
    assert.doesNotMatch(ar, /"><b>/)
    const arAll = await page('?lang=ar&q=digest')
    assert.match(arAll, /Ledger digest/)
    assert.match(arAll, /د\.إ/)
    assert.match(arAll, /٦٠/)
  })
})
