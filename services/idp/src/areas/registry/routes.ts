import { type App, html, type Kv, rateLimit } from '@svc/kit'
import { Type } from 'typebox'
import { page } from '../../pages/layout.ts'
import { agentCv, agentProfile, erc8004, type RegistryDeps } from './service.ts'

const CACHE_MS = 60_000

/**
 * The public agent registry (identity-provider.md, Public trust documents): 30 requests a minute
 * per IP, and each answer kept 60 s (here and by any cache: `max-age=60`).
 */
export function registryRoutes(app: App, deps: RegistryDeps & { kv: Kv; ratePerMinute: number }) {
  const limit = rateLimit(
    deps.kv,
    'agent-registry',
    { limit: deps.ratePerMinute, windowMs: 60_000 },
    'slow_down',
  )
  const kept = new Map<string, { body: unknown; until: number }>()
  const cached = async (key: string, make: () => Promise<unknown>) => {
    const hit = kept.get(key)
    if (hit && hit.until > Date.now()) return hit.body
    const body = await make()
    if (kept.size > 10_000) kept.clear()
    kept.set(key, { body, until: Date.now() + CACHE_MS })
    return body
  }
  const Did = Type.Object({
    did: Type.String({ pattern: '^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$', maxLength: 300 }),
  })
  const json = (path: string, summary: string, make: (did: string) => Promise<unknown>) =>
    app.get(
      path,
      { preHandler: limit, schema: { summary, tags: ['registry'], params: Did } },
      async (request, reply) =>
        reply
          .header('cache-control', 'public, max-age=60')
          .send(await cached(`${path}:${request.params.did}`, () => make(request.params.did))),
    )

  json('/agents/:did/profile.json', 'The agent’s registered facts beside its ledger history', (did) =>
    agentProfile(deps, did),
  )
  json('/agents/:did/erc8004.json', 'The agent’s ERC-8004 registration file', (did) => erc8004(deps, did))
  json('/agents/:did/cv.json', 'The agent’s AgentCV, signed by the issuer', (did) => agentCv(deps, did))

  app.get(
    '/agents/:did',
    { preHandler: limit, schema: { summary: 'The agent’s registry page', tags: ['registry'], params: Did } },
    async (request, reply) => {
      const profile = (await cached(`page:${request.params.did}`, () =>
        agentProfile(deps, request.params.did),
      )) as Awaited<ReturnType<typeof agentProfile>>
      const yes = (value: boolean) => (value ? 'yes' : 'no')
      return reply
        .header('cache-control', 'public, max-age=60')
        .type('text/html; charset=utf-8')
        .send(
          page(
            profile.name,
            html`<h1>${profile.name}</h1>
              <p><code>${profile.did}</code></p>
              <table aria-label="Registry facts">
                <tr><td>Registered</td><td>${profile.registered_at}</td></tr>
                <tr><td>Organization</td><td>${profile.organization?.name ?? 'none'}</td></tr>
                <tr><td>Domain verified</td><td>${yes(profile.trust.domain_verified)}${profile.organization?.domain ? html` (${profile.organization.domain})` : ''}</td></tr>
                <tr><td>Workload bound</td><td>${yes(profile.trust.workload_bound)}</td></tr>
                <tr><td>Model (declared by its operator)</td><td>${profile.agent ? `${profile.agent.model}${profile.agent.version ? ` ${profile.agent.version}` : ''}` : 'not declared'}</td></tr>
                <tr><td>Receipts on the ledger</td><td>${profile.ledger.reachable ? String(profile.ledger.receipts) : 'the ledger could not be reached'}</td></tr>
              </table>
              <p>
                <a href="/agents/${profile.did}/profile.json">profile.json</a> ·
                <a href="/agents/${profile.did}/cv.json">cv.json</a> ·
                <a href="/agents/${profile.did}/erc8004.json">erc8004.json</a>
              </p>`,
          ),
        )
    },
  )
}
