import type { ServiceSpec } from '@svc/kit'
import { CallerVerifier } from './areas/agents/callers.ts'
import { agentRoutes } from './areas/agents/routes.ts'
import { type RunningAgent, startAgents } from './areas/agents/service.ts'
import { type AgentsConfig, readAgentsConfig } from './config.ts'

const VERSION = '0.1.0'
const started = new WeakMap<object, Map<string, RunningAgent>>()

/** The built-in demo agents. They keep no data, so they get no database (PGlite costs ~250 MB). */
export const agents: ServiceSpec<AgentsConfig> = {
  name: 'agents',
  version: VERSION,
  description: 'The built-in demo agents: A2A servers that do real offline work.',
  errorShape: 'api',
  securitySchemes: {
    idpBearer: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description:
        "an RFC 9068 access token from the idp's client credentials grant with resource = this service's URL (RFC 8707)",
    },
  },
  readConfig: readAgentsConfig,
  async build(app, ctx) {
    const issuer = ctx.topology.idp.url
    const running = startAgents(ctx.baseUrl, issuer, ctx.config, VERSION)
    started.set(ctx, running)
    agentRoutes(app, running, new CallerVerifier({ issuer, audience: ctx.baseUrl }))
  },
  banner(ctx) {
    return [...(started.get(ctx)?.values() ?? [])].map(
      (a) => `agent ${a.definition.id}: ${a.cardUrl} (${a.key.did})`,
    )
  },
}
