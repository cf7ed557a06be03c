import { defineArea } from '../../context.ts'
import { marketRoutes } from './routes.ts'
import { listingOfAgent } from './store.ts'
import { assertHireable, listingSearch, type ListingView, type MarketDeps } from './service.ts'

export interface MarketService {
  /** What the market's routes work with. */
  readonly deps: MarketDeps
  /** 409 `listing_unavailable` when the agent's listing is unavailable now (no listing: hireable). */
  assertHireable(agentDid: string): Promise<void>
  /** The public page's search: listings matching `q` (all when blank), ranked, at most `limit`. */
  publicSearch(q: string | undefined, locale: 'en' | 'ar', limit: number): Promise<ListingView[]>
  /** The cap of the agent's listing when it is `limited`, else null (engagement capacity stays within it). */
  listingConcurrencyOf(agentDid: string): Promise<number | null>
}

/**
 * The market: listings a provider organization publishes for its agents (operators for the
 * platform's), searched with PostgreSQL full-text search, with an availability. Table: rental_listings.
 */
export const marketArea = defineArea({
  name: 'market',
  needs: ['events', 'catalogue', 'orgs'],
  mount(_app, ctx, use): MarketService {
    const deps: MarketDeps = { ...ctx, events: use.events, catalogue: use.catalogue }
    return {
      deps,
      assertHireable: (did) => assertHireable(deps, did),
      publicSearch: async (q, locale, limit) =>
        (await listingSearch(deps, { q, sort: 'relevance', limit, offset: 0 }, locale)).listings,
      listingConcurrencyOf: async (did) => {
        const row = await listingOfAgent(ctx.db, did)
        return row?.availability === 'limited' ? row.max_concurrency : null
      },
    }
  },
  routes(app, _ctx, use, own) {
    marketRoutes(app, own.deps, use.orgs)
  },
})
