import { publicAgent } from '@svc/kit/http/public-fetch'
import { defineArea } from '../../context.ts'
import { NO_MODELS } from '../../reactions.ts'
import type { RentalDb } from '../../db.ts'
import { checkCapacity, refreshCard } from './external.ts'
import { marketRoutes } from './routes.ts'
import { listingOfAgent, publishedAgents } from './store.ts'
import { assertHireable, listingSearch, type ListingView, type MarketDeps } from './service.ts'
import { tokenResourceOf } from './store.ts'

export { listingDetail, type ListingView } from './service.ts'

/** A read's column of its agent's latest listing id when `limited` (a task's engagement read carries it). */
export { limitedListingColumn } from './store.ts'

/** A listing on the market (search never answers an unpublished one). */
export type PublishedView = ListingView & {
  availability: { state: Exclude<ListingView['availability']['state'], 'unpublished'> }
}

export interface MarketService {
  /** What the market's routes work with. */
  readonly deps: MarketDeps
  /**
   * 409 `listing_unavailable` when the agent's listing is unavailable now or unpublished,
   * `listing_card_changed` when its external card changed (no listing: hireable). With `trx` (the
   * hire's transaction), the listing row is shared-locked there.
   */
  assertHireable(agentDid: string, trx?: RentalDb): Promise<void>
  /** Before a hire: an external agent's card fetched again when older than the TTL, a change flagged. */
  refreshCard(agentDid: string): Promise<void>
  /**
   * In a new task's transaction: 429 `listing_at_capacity` when the agent's limited listing is at
   * its cap. `limitedListingId`: what `limitedListingColumn` read in `trx` (no read of its own).
   */
  checkCapacity(
    trx: RentalDb,
    agentDid: string,
    running: () => Promise<number>,
    limitedListingId?: string | null,
  ): Promise<void>
  /** The RFC 8707 resource of the external agent reached at `url` that takes the rental's idp tokens, if any. */
  tokenResourceFor(url: string): Promise<string | undefined>
  /** The public page's search: listings matching `q` (all when blank), ranked, at most `limit`. */
  publicSearch(q: string | undefined, locale: 'en' | 'ar', limit: number): Promise<PublishedView[]>
  /** The cap of the agent's listing when it is `limited`, else null (engagement capacity stays within it). */
  listingConcurrencyOf(agentDid: string): Promise<number | null>
  /** Every published listing's agent (the models list reads their declarations). */
  listedAgents(): Promise<ListedAgent[]>
}

export interface ListedAgent {
  listing_id: string
  agent_did: string
  title: string
  card_url: string | null
}

/**
 * The market: listings a provider organization publishes for its agents (operators for the
 * platform's) or for external A2A agents named by URL, searched with PostgreSQL full-text search,
 * with an availability. Table: rental_listings.
 */
export const marketArea = defineArea({
  name: 'market',
  needs: ['events', 'catalogue', 'orgs', 'onboarding'],
  mount(app, ctx, use): MarketService {
    // external agents' cards and JWK Sets: public addresses only, unless development or tests
    const fetchAgent = publicAgent({ allowPrivate: ctx.config.market.allowPrivate, connectTimeoutMs: 5_000 })
    app.addHook('onClose', async () => fetchAgent.close())
    const deps: MarketDeps = {
      ...ctx,
      events: use.events,
      catalogue: use.catalogue,
      onboarding: use.onboarding,
      fetchAgent,
      models: { of: (dids) => ctx.reactions.one('models.of', NO_MODELS)(dids) },
    }
    return {
      deps,
      assertHireable: (did, trx) => assertHireable(trx ?? ctx.db, did),
      refreshCard: (did) => refreshCard(deps, did),
      checkCapacity,
      tokenResourceFor: (url) => tokenResourceOf(ctx.db, url),
      publicSearch: async (q, locale, limit) =>
        (await listingSearch(deps, { q, sort: 'relevance', limit, offset: 0 }, locale)).listings.filter(
          (l): l is typeof l & PublishedView => l.availability.state !== 'unpublished',
        ),
      listingConcurrencyOf: async (did) => {
        const row = await listingOfAgent(ctx.db, did)
        return row?.availability === 'limited' ? row.max_concurrency : null
      },
      listedAgents: () => publishedAgents(ctx.db),
    }
  },
  routes(app, _ctx, use, own) {
    marketRoutes(app, own.deps, use.orgs)
  },
})
