import { createHash } from 'node:crypto'
import type { MoneyLocale } from '@svc/kit'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type Actor, SYSTEM } from '../events/index.ts'
import {
  cardHash,
  cardUrlOf,
  fetchCardJson,
  type FetchRules,
  runnable,
  validCard,
  verifyCardSignatures,
} from './card.ts'
import { type MarketDeps, type NewListing, type Publisher, publishListing } from './service.ts'
import * as store from './store.ts'

/** What a provider gives for an external listing: the agent's URL, the jobs it serves, the listing's terms. */
export interface NewExternalListing extends Omit<NewListing, 'agent_did' | 'title' | 'description'> {
  url: string
  job_ids: string[]
  title?: string | undefined
  description?: string | undefined
}

const rulesOf = (deps: MarketDeps): FetchRules => ({
  agent: deps.fetchAgent,
  allowPrivate: deps.config.market.allowPrivate,
})

/**
 * Publishes an external A2A agent: its card fetched (kit public fetch), validated, its signatures
 * verified, its did:key and JSON-RPC endpoint read; the agent stored in the catalogue (provided by
 * the member's organization, serving `job_ids`) and listed with the card's hash, in one transaction.
 * Publishing the same URL again re-reads the card and clears a change flag.
 */
export async function publishExternal(
  deps: MarketDeps,
  who: Publisher,
  input: NewExternalListing,
  actor: Actor,
  locale: MoneyLocale,
) {
  const rules = rulesOf(deps)
  const cardUrl = cardUrlOf(input.url)
  const json = await fetchCardJson(cardUrl, rules)
  const card = validCard(json)
  const kids = await verifyCardSignatures(card, rules)
  const run = await runnable(card, rules, deps.topology.idp.url)
  const orgId = who.orgId
  const known = await deps.catalogue.agentByDid(deps.db, run.did)
  if (known && known.provider_org_id !== orgId)
    throw rentalError('agent_did_taken', `another provider publishes the agent ${run.did}`)
  const jobIds = [...new Set(input.job_ids)]
  const hash = cardHash(json)
  const listing = await publishListing(
    deps,
    who,
    {
      ...input,
      agent_did: run.did,
      title: input.title ?? card.name,
      description: input.description ?? (card.description.trim() || card.name),
      skills: input.skills ?? card.skills.map((s) => s.name),
    },
    actor,
    locale,
    {
      orgId,
      card: {
        card_url: cardUrl,
        card_sha256: hash,
        card_signature_kid: kids[0] ?? null,
        card_token_resource: run.tokenResource,
      },
      before: async (trx) => {
        const linked = await deps.catalogue.registerAgent(
          trx,
          {
            id: known?.id ?? `ext-${createHash('sha256').update(run.did).digest('hex').slice(0, 20)}`,
            did: run.did,
            name: card.name,
            description: card.description,
            card_url: cardUrl,
            endpoint: run.endpoint,
            skills: card.skills.map((s) => s.name),
            provider_org_id: orgId,
          },
          jobIds,
        )
        const missing = jobIds.filter((j) => !linked.includes(j))
        if (missing.length) throw rentalError('job_not_found', `no job ${missing.join(', ')}`)
      },
    },
  )
  return listing
}

/**
 * The change check (before a hire): an external agent's listing whose card was fetched longer ago
 * than RENTAL_MARKET_CARD_TTL_S has it fetched again; a hash other than the listed one flags the
 * listing (`card_changed`, `listing.card_changed` with both hashes, once per new hash). A card that
 * cannot be fetched changes nothing (the hire goes on; its tasks meet the agent's failure).
 */
export async function refreshCard(deps: MarketDeps, agentDid: string) {
  const row = await store.listingOfAgent(deps.db, agentDid)
  if (!row?.card_url || row.availability === 'unpublished') return
  const now = deps.now()
  const age = row.card_fetched_at ? now.getTime() - row.card_fetched_at.getTime() : Infinity
  if (age < deps.config.market.cardTtlS * 1000) return
  let latest: string
  try {
    latest = cardHash(await fetchCardJson(row.card_url, rulesOf(deps)))
  } catch (err) {
    deps.log.warn({ listing: row.id, err: (err as Error).message }, 'external agent card not fetched')
    return
  }
  await inTransaction(deps.db, async (trx) => {
    const locked = await store.listingById(trx, row.id, true)
    if (!locked?.card_url) return
    const changed = latest !== locked.card_sha256
    const news = changed && latest !== locked.card_latest_sha256
    await store.cardFetched(trx, locked.id, latest, changed, now)
    if (news)
      await deps.events.record(trx, {
        orgId: locked.org_id,
        type: 'listing.card_changed',
        subjects: { listing_id: locked.id, agent_did: locked.agent_did },
        actor: SYSTEM,
        data: { card_url: locked.card_url, listed_sha256: locked.card_sha256, new_sha256: latest },
      })
  })
}

/** What a refusal at the cap suggests waiting (a task's run is seconds). */
const RETRY_AFTER_S = 5

/**
 * The limited cap, in the task's transaction: when the agent's listing is `limited`, its row is
 * locked FOR UPDATE (concurrent task creations for the agent take turns) and the agent's running
 * tasks (submitted or working, every client's) counted; at the cap, 429 `listing_at_capacity`.
 * `limitedListingId`: the listing as the caller's read in `trx` found it (`limitedListingColumn`),
 * so it is not read again; undefined: read here.
 */
export async function checkCapacity(
  trx: RentalDb,
  agentDid: string,
  running: () => Promise<number>,
  limitedListingId?: string | null,
) {
  const limited =
    limitedListingId !== undefined
      ? limitedListingId
      : await store
          .availabilityOfAgent(trx, agentDid)
          .then((seen) => (seen?.availability === 'limited' ? seen.id : null))
  if (limited === null) return
  const row = await store.listingById(trx, limited, true)
  if (row?.availability !== 'limited' || row.max_concurrency === null) return
  const count = await running()
  if (count >= row.max_concurrency)
    throw rentalError(
      'listing_at_capacity',
      `the listing ${row.id} is limited to ${row.max_concurrency} running task(s) and ${count} are running: try again later`,
      { 'retry-after': String(RETRY_AFTER_S) },
    )
}
