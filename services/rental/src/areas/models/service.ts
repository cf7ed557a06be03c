import type { Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import type { ListedAgent, MarketService } from '../market/index.ts'

export interface ModelDeps extends RentalContext {
  market: MarketService
}

/** The operator's declaration as the idp's registry shows it (`agent` of the agent's profile). */
interface Declared {
  model: string
  version: string | null
  provider: string | null
}

const CACHE_MS = 60_000
const FETCH_TIMEOUT_MS = 3_000
const PARALLEL = 4

/**
 * The idp's registry profile of an agent (`GET /agents/{did}/profile.json`, public): its `agent`
 * is the model its operator declared. Kept a minute (the registry is rate limited); an agent the
 * registry does not know, or an idp that does not answer, declares nothing.
 */
export class Declarations {
  #kept = new Map<string, { value: Declared | null; until: number }>()
  constructor(private readonly idpUrl: string) {}

  async of(did: string): Promise<Declared | null> {
    const hit = this.#kept.get(did)
    if (hit && hit.until > Date.now()) return hit.value
    const value = await this.#fetch(did)
    this.#kept.set(did, { value, until: Date.now() + CACHE_MS })
    return value
  }

  async #fetch(did: string): Promise<Declared | null> {
    try {
      const res = await fetch(`${this.idpUrl}/agents/${encodeURIComponent(did)}/profile.json`, {
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      })
      if (!res.ok) return null
      const body = (await res.json()) as { agent?: unknown }
      const agent = body.agent as Record<string, unknown> | null | undefined
      if (!agent || typeof agent.model !== 'string' || agent.declared_by !== 'operator') return null
      const text = (v: unknown) => (typeof v === 'string' ? v : null)
      return { model: agent.model, version: text(agent.version), provider: text(agent.provider) }
    } catch {
      return null
    }
  }
}

export interface ModelQuery extends Page {
  provider?: string | undefined
}

/** The models the listed agents declare, one entry per listing whose agent declares one. */
export async function listModels(deps: ModelDeps, declarations: Declarations, query: ModelQuery) {
  const listed = await deps.market.listedAgents()
  const found: Array<{ listing: ListedAgent; declared: Declared }> = []
  for (let i = 0; i < listed.length; i += PARALLEL) {
    const batch = listed.slice(i, i + PARALLEL)
    const declared = await Promise.all(batch.map((l) => declarations.of(l.agent_did)))
    batch.forEach((listing, j) => {
      if (declared[j]) found.push({ listing, declared: declared[j] })
    })
  }
  const wanted = query.provider?.toLowerCase()
  const matching = found.filter((f) => wanted === undefined || f.declared.provider?.toLowerCase() === wanted)
  return {
    models: matching.slice(query.offset, query.offset + query.limit).map(({ listing, declared }) => ({
      agent_did: listing.agent_did,
      listing_id: listing.listing_id,
      listing_title: listing.title,
      external: listing.card_url !== null,
      model: declared.model,
      version: declared.version,
      provider: declared.provider,
      declared_by: 'operator' as const,
      source: 'idp_registry' as const,
    })),
    total: matching.length,
    limit: query.limit,
    offset: query.offset,
  }
}
