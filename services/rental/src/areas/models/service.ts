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

/** A model as the catalogue and the listings show it: what the agent's operator declared. */
export interface DeclaredModel {
  id: string
  version: string | null
  provider: string | null
  declared_by: 'operator'
}

/** Each agent's declared models, by DID (an agent that declares none: an empty list). */
export type ModelsOf = (dids: string[]) => Promise<Map<string, DeclaredModel[]>>

const FRESH_MS = 60_000
/** An entry older than this is not served while it is refreshed: the request waits for the idp. */
const KEPT_MS = 30 * 60_000
/** After a failed read (the idp down, rate limited), the next try: sooner than a fresh answer's life. */
const RETRY_MS = 5_000
const FETCH_TIMEOUT_MS = 3_000
const PARALLEL = 4

interface Kept {
  value: Declared | null
  /** Fresh until then; after it, served while refreshed in the background. */
  fresh: number
  /** Served until then. */
  until: number
}

/**
 * The idp's registry profile of an agent (`GET /agents/{did}/profile.json`, public): its `agent`
 * is the model its operator declared. Kept a minute, then served while refreshed in the
 * background (stale-while-revalidate, one refresh per agent at a time), so a request does not
 * wait on the idp each time: only an agent never read (or not read for half an hour) waits.
 * An agent the registry does not know declares nothing; a failed read keeps what was known.
 */
export class Declarations {
  #kept = new Map<string, Kept>()
  #reading = new Map<string, Promise<Declared | null>>()
  constructor(
    private readonly idpUrl: string,
    private readonly now: () => number = Date.now,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async of(did: string): Promise<Declared | null> {
    const hit = this.#kept.get(did)
    const now = this.now()
    if (hit && hit.fresh > now) return hit.value
    if (hit && hit.until > now) {
      void this.#read(did)
      return hit.value
    }
    return this.#read(did)
  }

  /** The refresh under way for `did`, if any (tests wait on it). */
  refreshing(did: string): Promise<Declared | null> | undefined {
    return this.#reading.get(did)
  }

  #read(did: string): Promise<Declared | null> {
    let reading = this.#reading.get(did)
    if (!reading) {
      reading = this.#fetch(did).then((read) => {
        const now = this.now()
        const known = this.#kept.get(did)
        if (read.ok) this.#kept.set(did, { value: read.value, fresh: now + FRESH_MS, until: now + KEPT_MS })
        else
          this.#kept.set(did, {
            value: known?.value ?? null,
            fresh: now + RETRY_MS,
            until: Math.max(known?.until ?? 0, now + RETRY_MS),
          })
        this.#reading.delete(did)
        return this.#kept.get(did)!.value
      })
      this.#reading.set(did, reading)
    }
    return reading
  }

  async #fetch(did: string): Promise<{ ok: true; value: Declared | null } | { ok: false }> {
    try {
      const res = await this.fetchImpl(`${this.idpUrl}/agents/${encodeURIComponent(did)}/profile.json`, {
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      })
      if (res.status === 404) return { ok: true, value: null }
      if (!res.ok) return { ok: false }
      const body = (await res.json()) as { agent?: unknown }
      const agent = body.agent as Record<string, unknown> | null | undefined
      if (!agent || typeof agent.model !== 'string' || agent.declared_by !== 'operator')
        return { ok: true, value: null }
      const text = (v: unknown) => (typeof v === 'string' ? v : null)
      return {
        ok: true,
        value: { model: agent.model, version: text(agent.version), provider: text(agent.provider) },
      }
    } catch {
      return { ok: false }
    }
  }

  /** Each agent's declared models (at most `PARALLEL` reads of the idp at a time). */
  async modelsOf(dids: string[]): Promise<Map<string, DeclaredModel[]>> {
    const unique = [...new Set(dids)]
    const out = new Map<string, DeclaredModel[]>()
    for (let i = 0; i < unique.length; i += PARALLEL) {
      const batch = unique.slice(i, i + PARALLEL)
      const declared = await Promise.all(batch.map((did) => this.of(did)))
      batch.forEach((did, j) => {
        const d = declared[j]
        out.set(
          did,
          d ? [{ id: d.model, version: d.version, provider: d.provider, declared_by: 'operator' }] : [],
        )
      })
    }
    return out
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
      const d = declared[j]
      if (d) found.push({ listing, declared: d })
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
