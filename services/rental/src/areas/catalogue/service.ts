import { DID_KEY_PATTERN, isEd25519DidKey } from '@svc/kit'
import type { Logger } from 'pino'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import type { RentalDb } from '../../db.ts'
import { PLATFORM_ORG_ID } from '../orgs/index.ts'
import { DEMO_AGENTS_AR, DEMO_JOBS } from './seed.ts'
import { ensureJob, upsertAgent } from './store.ts'

/** The agents service's listing (`GET {agents_url}/agents`), as its contract gives it. */
const ListedAgent = Type.Object({
  id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  did: Type.String({ pattern: DID_KEY_PATTERN }),
  card_url: Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2000 }),
  skills: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 50 })),
})
const Listing = Type.Object({ agents: Type.Array(Type.Unknown(), { maxItems: 200 }) })

const CARD_SUFFIX = '/.well-known/agent-card.json'

export async function seedJobs(db: RentalDb) {
  for (const job of DEMO_JOBS) await ensureJob(db, job)
}

/** Fetches the agents service's listing and stores each agent; entries that break the contract are skipped. */
export async function importAgents(db: RentalDb, agentsUrl: string, log: Logger): Promise<number> {
  const res = await fetch(`${agentsUrl}/agents`, { signal: AbortSignal.timeout(5_000) })
  if (!res.ok) throw new Error(`the agents service answered ${res.status}`)
  const body: unknown = await res.json()
  if (!Value.Check(Listing, body)) throw new Error('the agents listing has no agents array')
  let stored = 0
  for (const entry of body.agents) {
    if (!Value.Check(ListedAgent, entry) || !isEd25519DidKey(entry.did)) {
      log.warn({ entry }, 'an agent listing entry breaks the contract: skipped')
      continue
    }
    // the A2A endpoint is where the card lives: {agents_url}/agents/{id}
    const endpoint = entry.card_url.endsWith(CARD_SUFFIX)
      ? entry.card_url.slice(0, -CARD_SUFFIX.length)
      : `${agentsUrl}/agents/${entry.id}`
    await upsertAgent(db, {
      id: entry.id,
      did: entry.did,
      name: entry.name,
      description: entry.description ?? '',
      card_url: entry.card_url,
      endpoint,
      skills: entry.skills ?? [],
      // the built-in agents' Arabic words are the rental's (the agents service lists English only)
      name_ar: DEMO_AGENTS_AR[entry.id]?.name ?? null,
      description_ar: DEMO_AGENTS_AR[entry.id]?.description ?? null,
      // the agents service's agents are the built-in ones: the platform's own provider publishes them
      provider_org_id: PLATFORM_ORG_ID,
    })
    stored++
  }
  return stored
}

const MAX_RETRY_MS = 30_000

/**
 * Seeds the catalogue: the demo jobs at once, the agents from the agents service in the
 * background, tried again (250 ms doubling to 30 s) until it answers. Readiness never waits for
 * it: until then the jobs list no agents.
 */
export function startSeeding(
  db: RentalDb,
  agentsUrl: string,
  log: Logger,
): { stop(): void; done: Promise<void> } {
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  let attempt = 0
  let resolve!: () => void
  const done = new Promise<void>((r) => (resolve = r))
  const tryOnce = async () => {
    if (stopped) return
    try {
      const count = await importAgents(db, agentsUrl, log)
      log.info({ agents: count }, 'agents imported from the agents service')
      resolve()
    } catch (err) {
      const delay = Math.min(MAX_RETRY_MS, 250 * 2 ** attempt++)
      log[attempt > 8 ? 'warn' : 'debug'](
        { err: (err as Error).message, retry_ms: delay },
        'agents listing not available yet',
      )
      if (!stopped) timer = setTimeout(() => void tryOnce(), delay)
    }
  }
  void tryOnce()
  return {
    stop() {
      stopped = true
      clearTimeout(timer)
      resolve()
    },
    done,
  }
}
