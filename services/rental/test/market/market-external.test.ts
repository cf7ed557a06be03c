import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { canonicalBytes } from '@svc/trust/jcs'
import { exportJWK, FlattenedSign, generateKeyPair } from 'jose'
import type { lookup as dnsLookup } from 'node:dns'
import { guardedFetch } from '@svc/kit/http/guarded-fetch'
import { publicAgent, PublicUrlError } from '@svc/kit/http/public-fetch'
import { agents } from '../../../agents/src/app.ts'
import { fetchCardJson } from '../../src/areas/market/card.ts'
import { AgentDispatcher } from '../../src/areas/tasks/dispatch.ts'
import { type Answer, type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

interface Listing {
  id: string
  provider_org_id: string
  agent_did: string
  title: string
  availability: { state: string; max_concurrency: number | null }
  external: {
    card_url: string
    card_sha256: string
    card_changed: boolean
    latest_card_sha256: string
    signed_by_kid: string | null
  } | null
}

/** A resolver whose every name is `address` (an attacker's DNS). */
const resolvesTo = (address: string): typeof dnsLookup =>
  ((_host: string, _options: unknown, callback: (err: null, addresses: unknown) => void) =>
    callback(null, [{ address, family: 4 }])) as unknown as typeof dnsLookup

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

describe('the market: external A2A agents listed by URL, hired and run; cards checked; limited and unpublished', () => {
  let stack: FullStack
  let external: RunningService<unknown>
  let port: number
  let provider: FullStack['alice']
  let listing: Listing
  let signedListing: Listing
  let cards: Server
  let cardsUrl = ''
  const served = new Map<string, unknown>()
  const cardHits: string[] = []

  const code = (res: Answer) => (res.body.error as { code?: string } | undefined)?.code
  /** A second agents service (another key seed: other agents, other DIDs) on a fixed port. */
  const startExternal = async (seedByte: number) =>
    (await startService(
      agents,
      testEnv({
        AGENTS_PORT: String(port),
        AGENTS_KEY_SEED: Buffer.alloc(32, seedByte).toString('base64url'),
        IDP_URL: stack.idp.url,
      }),
    )) as unknown as RunningService<unknown>
  const externalDid = async () => {
    const listed = (await (await fetch(`${external.url}/agents`)).json()) as {
      agents: Array<{ id: string; did: string }>
    }
    return listed.agents.find((a) => a.id === 'summariser')!.did
  }
  const publish = (body: Record<string, unknown>) =>
    stack.call(provider, 'POST', '/api/market/listings/external', {
      job_ids: ['job_summary'],
      price_fils: 5000,
      ...body,
    })

  before(async () => {
    stack = await startFullStack({ RENTAL_MARKET_CARD_TTL_S: '0' })
    port = await freePort()
    external = await startExternal(9)
    // the provider: a new organization of its own (its owner may publish)
    provider = await stack.signInWith('provider@external.example')
    // cards the test signs, and their JWK Set, served as a provider would
    cards = createServer((req, res) => {
      cardHits.push(req.url ?? '')
      const body = served.get(req.url ?? '')
      if (body === undefined) return void res.writeHead(404).end()
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    })
    await new Promise<void>((resolve) => cards.listen(0, '127.0.0.1', resolve))
    cardsUrl = `http://127.0.0.1:${(cards.address() as AddressInfo).port}`
  })
  after(async () => {
    await new Promise<void>((resolve) => cards?.close(() => resolve()))
    await external?.close()
    await stack?.close()
  })

  it('lists an external agent by URL: card fetched, validated, hashed; the agent is the provider’s in the catalogue', async () => {
    const res = await publish({ url: `${external.url}/agents/summariser`, tags: ['external'] })
    assert.equal(res.status, 200, res.text)
    listing = res.body as unknown as Listing
    assert.equal(listing.agent_did, await externalDid())
    assert.equal(listing.provider_org_id, provider.me.organization.id)
    assert.equal(listing.title, 'Summariser')
    assert.equal(listing.external?.card_url, `${external.url}/agents/summariser/.well-known/agent-card.json`)
    assert.match(listing.external!.card_sha256, /^[0-9a-f]{64}$/)
    assert.equal(listing.external!.card_changed, false)
    assert.equal(listing.external!.signed_by_kid, null)
    const jobs = (await stack.call(stack.alice, 'GET', '/api/jobs')).body.jobs as Array<{
      id: string
      agents: Array<{ did: string; provider: { id: string } }>
    }>
    const served = jobs.find((j) => j.id === 'job_summary')!.agents.find((a) => a.did === listing.agent_did)
    assert.equal(served?.provider.id, provider.me.organization.id)
  })

  it('is hired and runs through the same dispatch: a task completed, its receipt on the ledger', async () => {
    const key = stack.newClientKey()
    const engagementId = await stack.hireAndSign(stack.alice, 'job_summary', listing.agent_did, key)
    const made = await stack.call(stack.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'External agents are reached at their card’s interface URL. The rental checks every result.',
    })
    assert.equal(made.status, 200, made.text)
    const task = made.body.task as { id: string; state: string; receipt: { leaf_hash: string } | null }
    assert.equal(task.state, 'completed', made.text)
    assert.ok(task.receipt?.leaf_hash)
    await eventually('the receipt is on the ledger', async () => {
      const read = (await stack.call(stack.alice, 'GET', `/api/tasks/${task.id}`)).body as {
        receipt: { ledger_index: number | null } | null
      }
      return read.receipt?.ledger_index !== null && read.receipt?.ledger_index !== undefined
    })
    const row = await stack.db
      .selectFrom('tasks')
      .select(['agent_did', 'state'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow()
    assert.deepEqual(row, { agent_did: listing.agent_did, state: 'completed' })
  })

  it('limited: concurrent task creations across engagements settle at the cap exactly; the rest 429', async () => {
    const set = await stack.call(provider, 'POST', `/api/market/listings/${listing.id}/availability`, {
      state: 'limited',
      max_concurrency: 2,
    })
    assert.equal(set.status, 200, set.text)
    // the agent is down: the tasks let in stay running (retried), holding their places
    await external.close()
    const engagements = []
    for (let i = 0; i < 3; i++)
      engagements.push(
        await stack.hireAndSign(stack.alice, 'job_summary', listing.agent_did, stack.newClientKey()),
      )
    const made = await Promise.all(
      engagements.flatMap((id) =>
        [1, 2].map((n) =>
          stack.call(stack.alice, 'POST', '/api/tasks', {
            engagement_id: id,
            text: `Task ${n} of ${id}, while the agent is away.`,
          }),
        ),
      ),
    )
    const statuses = made.map((r) => r.status).sort()
    assert.deepEqual(statuses, [200, 200, 429, 429, 429, 429], made.map((r) => r.text).join('\n'))
    for (const refused of made.filter((r) => r.status === 429)) {
      assert.equal(code(refused), 'listing_at_capacity')
      assert.match(refused.text, /limited to 2 running task\(s\) and 2 are running/)
      assert.equal(refused.headers.get('retry-after'), '5')
    }
    const running = await stack.db
      .selectFrom('tasks')
      .select('id')
      .where('agent_did', '=', listing.agent_did)
      .where('state', 'in', ['submitted', 'working'])
      .execute()
    assert.equal(running.length, 2)
  })

  it('a card that changes is noticed at the next hire: flagged with both hashes, an event, hiring 409', async () => {
    // the same agent, restarted with another key seed: its card names another did:key
    external = await startExternal(11)
    const hire = await stack.call(stack.alice, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: listing.agent_did,
      client_did: didKeyFromEd25519(stack.newClientKey().publicKey),
    })
    assert.equal(hire.status, 409, hire.text)
    assert.equal(code(hire), 'listing_card_changed')
    const read = (await stack.call(stack.alice, 'GET', `/api/market/listings/${listing.id}`))
      .body as unknown as Listing
    assert.equal(read.external!.card_changed, true)
    assert.equal(read.external!.card_sha256, listing.external!.card_sha256)
    assert.notEqual(read.external!.latest_card_sha256, listing.external!.card_sha256)
    const events = await stack.db
      .selectFrom('rental_events')
      .select(['data', 'org_id'])
      .where('type', '=', 'listing.card_changed')
      .execute()
    assert.equal(events.length, 1)
    assert.equal(events[0]!.org_id, provider.me.organization.id)
    assert.deepEqual(events[0]!.data, {
      card_url: listing.external!.card_url,
      listed_sha256: listing.external!.card_sha256,
      new_sha256: read.external!.latest_card_sha256,
    })
  })

  it('a signed card is verified (key by jku and kid); a tampered one is 422', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256')
    served.set('/jwks.json', { keys: [{ ...(await exportJWK(publicKey)), kid: 'key-1', alg: 'ES256' }] })
    const card = (await (
      await fetch(`${external.url}/agents/extractor/.well-known/agent-card.json`)
    ).json()) as {
      name: string
      capabilities: { extensions: Array<{ params: { did: string }; required?: boolean }> }
    }
    // another agent's DID, so that this listing is an agent of its own
    card.capabilities.extensions[0]!.params.did = didKeyFromEd25519(stack.newClientKey().publicKey)
    // A2A §8.4.1: signed without `signatures` and without fields at their default (required: false)
    const payload = structuredClone(card)
    assert.equal(payload.capabilities.extensions[0]!.required, false)
    delete payload.capabilities.extensions[0]!.required
    const jws = await new FlattenedSign(canonicalBytes(payload))
      .setProtectedHeader({ alg: 'ES256', typ: 'JOSE', kid: 'key-1', jku: `${cardsUrl}/jwks.json` })
      .sign(privateKey)
    const signed = { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] }
    served.set('/signed/.well-known/agent-card.json', signed)
    const ok = await publish({ url: `${cardsUrl}/signed` })
    assert.equal(ok.status, 200, ok.text)
    signedListing = ok.body as unknown as Listing
    assert.equal(signedListing.external!.signed_by_kid, 'key-1')
    served.set('/tampered/.well-known/agent-card.json', { ...signed, name: 'Someone else' })
    const bad = await publish({ url: `${cardsUrl}/tampered` })
    assert.equal(bad.status, 422, bad.text)
    assert.equal(code(bad), 'agent_card_signature_invalid')
    // a key carried in the signature proves nothing
    const selfSigned = await new FlattenedSign(canonicalBytes(payload))
      .setProtectedHeader({ alg: 'ES256', kid: 'key-1', jwk: await exportJWK(publicKey) })
      .sign(privateKey)
    served.set('/self/.well-known/agent-card.json', {
      ...card,
      signatures: [{ protected: selfSigned.protected, signature: selfSigned.signature }],
    })
    const self = await publish({ url: `${cardsUrl}/self` })
    assert.equal(code(self), 'agent_card_signature_invalid', self.text)
  })

  it('bad cards and URLs: 400 or 422 with a code, never 5XX', async () => {
    served.set('/broken/.well-known/agent-card.json', { name: 'No skills', description: '' })
    served.set('/notjson/.well-known/agent-card.json', 'a string')
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ url: `${cardsUrl}/broken` }, 422, 'agent_card_invalid'],
      [{ url: `${cardsUrl}/notjson` }, 422, 'agent_card_invalid'],
      [{ url: `${cardsUrl}/missing` }, 422, 'agent_card_unreachable'],
      [{ url: `http://127.0.0.1:${await freePort()}/agent` }, 422, 'agent_card_unreachable'],
      [{ url: 'ftp://example.com/agent' }, 400, 'invalid_request'],
      [{ url: `${external.url}/agents/summariser`, job_ids: ['job_nothing'] }, 404, 'job_not_found'],
      [{ url: `${external.url}/agents/summariser`, job_ids: [] }, 400, 'invalid_request'],
    ]
    for (const [body, status, want] of cases) {
      const res = await publish(body)
      assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`)
      assert.equal(code(res), want, res.text)
    }
    // a built-in agent's DID cannot be listed by another provider
    const builtIn = await startFullStackAgentCard(stack)
    served.set('/builtin/.well-known/agent-card.json', builtIn)
    const taken = await publish({ url: `${cardsUrl}/builtin` })
    assert.equal(taken.status, 409, taken.text)
    assert.equal(code(taken), 'agent_did_taken')
  })

  it('outside development and tests: http, loopback and private addresses are refused before any request (422)', async () => {
    const agent = publicAgent({ allowPrivate: false })
    try {
      for (const url of [
        `${external.url}/agents/summariser/.well-known/agent-card.json`,
        'https://127.0.0.1/.well-known/agent-card.json',
        'https://10.0.0.7/.well-known/agent-card.json',
        'https://[::ffff:169.254.169.254]/.well-known/agent-card.json',
        'https://localhost/.well-known/agent-card.json',
      ])
        await assert.rejects(
          fetchCardJson(url, { agent, allowPrivate: false }),
          (err: Error & { code?: string }) => {
            assert.equal(err.code, 'agent_card_unreachable', `${url}: ${err.message}`)
            assert.match(err.message, /https|public|resolve/)
            return true
          },
        )
    } finally {
      await agent.close()
    }
  })

  it('unpublished: off search and /market, read by its organization only, not hired; published again it is back', async () => {
    const id = signedListing.id
    const off = await stack.call(provider, 'POST', `/api/market/listings/${id}/availability`, {
      state: 'unpublished',
    })
    assert.equal(off.status, 200, off.text)
    assert.equal((off.body as unknown as Listing).availability.state, 'unpublished')
    const search = await stack.call(stack.alice, 'GET', '/api/market/listings?q=extractor')
    assert.deepEqual((search.body as { listings: Listing[] }).listings.map((l) => l.id).includes(id), false)
    const page = await (await fetch(`${stack.rental.url}/market`)).text()
    const listed = page.slice(page.indexOf('class="listings"'), page.indexOf('</table>'))
    assert.match(listed, /Summariser/)
    assert.doesNotMatch(listed, new RegExp(signedListing.title))
    assert.equal((await stack.call(stack.alice, 'GET', `/api/market/listings/${id}`)).status, 404)
    assert.equal((await stack.call(provider, 'GET', `/api/market/listings/${id}`)).status, 200)
    const hire = await stack.call(stack.alice, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: signedListing.agent_did,
      client_did: didKeyFromEd25519(stack.newClientKey().publicKey),
    })
    assert.equal(hire.status, 409, hire.text)
    assert.equal(code(hire), 'listing_unavailable')
    assert.match(hire.text, /unpublished/)
    const again = await publish({ url: `${cardsUrl}/signed` })
    assert.equal(again.status, 200, again.text)
    assert.equal((again.body as unknown as Listing).id, id)
    assert.equal((again.body as unknown as Listing).availability.state, 'available')
  })

  it('at dispatch the card is fetched again through the guard: an endpoint it names at a metadata address, or one that redirects, fails the task in words, nothing reaches it', async () => {
    const hits: string[] = []
    const endpoint = createServer((req, res) => {
      hits.push(req.url ?? '')
      req.resume()
      res.writeHead(307, { location: '/inside' }).end()
    })
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve))
    const card = (await (
      await fetch(`${external.url}/agents/extractor/.well-known/agent-card.json`)
    ).json()) as {
      supportedInterfaces: Array<{ url: string }>
      capabilities: { extensions: Array<{ params: { did: string } }> }
    }
    /** A listing of its own, hired; then its card names `url` as its endpoint, and a task is made. */
    const taskAfterSwap = async (name: string, url: string) => {
      const own = structuredClone(card)
      own.capabilities.extensions[0]!.params.did = didKeyFromEd25519(stack.newClientKey().publicKey)
      served.set(`/${name}/.well-known/agent-card.json`, own)
      const listed = await publish({ url: `${cardsUrl}/${name}` })
      assert.equal(listed.status, 200, listed.text)
      const did = (listed.body as unknown as Listing).agent_did
      const engagementId = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
      served.set(`/${name}/.well-known/agent-card.json`, {
        ...own,
        supportedInterfaces: own.supportedInterfaces.map((i) => ({ ...i, url })),
      })
      const made = await stack.call(stack.alice, 'POST', '/api/tasks', {
        engagement_id: engagementId,
        text: 'A card that changed its endpoint after the hire.',
      })
      assert.equal(made.status, 200, made.text)
      return made.body.task as { state: string; error: string | null; receipt: unknown }
    }
    try {
      for (const [name, url, words] of [
        [
          'metadata',
          'http://169.254.169.254/latest/meta-data/',
          /169\.254\.169\.254 is not a public address \(a cloud metadata/,
        ],
        ['mapped', 'http://[::ffff:a9fe:a9fe]/a2a', /not a public address \(a cloud metadata/],
        [
          'redirecting',
          `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/a2a`,
          /answered 307 \(a redirect is not followed\)/,
        ],
      ] as const) {
        const task = await taskAfterSwap(name, url)
        assert.equal(task.state, 'failed', `${name}: ${JSON.stringify(task)}`)
        assert.match(task.error ?? '', /^the agent's address is refused: /, name)
        assert.match(task.error ?? '', words, name)
        assert.equal(task.receipt, null, name)
      }
      // the redirecting endpoint was asked once; where it pointed, never
      assert.deepEqual(hits, ['/a2a'])
    } finally {
      await new Promise<void>((resolve) => endpoint.close(() => resolve()))
    }
  })

  it('outside development and tests the dispatch refuses a card at a private address, or at a name resolving to one, before any request', async () => {
    const guard = guardedFetch({ allowPrivate: false, lookup: resolvesTo('127.0.0.1') })
    const dispatcher = new AgentDispatcher({ trusted: () => false, guarded: guard.fetch })
    const seen = cardHits.length
    try {
      for (const url of [
        `${cardsUrl}/signed/.well-known/agent-card.json`,
        'https://cards.example.com/a/.well-known/agent-card.json',
      ])
        await assert.rejects(dispatcher.send(url, 'hello', AbortSignal.timeout(5_000)), (err: Error) => {
          assert.ok(err instanceof PublicUrlError, `${url}: ${err.message}`)
          assert.match(err.message, /must be https|resolves to 127\.0\.0\.1, not a public address/)
          return true
        })
      assert.equal(cardHits.length, seen)
    } finally {
      await guard.close()
    }
  })
})

/** The card of one of the platform's built-in agents (the first agents service's summariser). */
async function startFullStackAgentCard(stack: FullStack) {
  return (await (
    await fetch(`${stack.agents.url}/agents/summariser/.well-known/agent-card.json`)
  ).json()) as unknown
}
