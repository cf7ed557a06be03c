import type { ServiceSpec } from '@svc/kit'
import { agentsArea } from './areas/agents/index.ts'
import { toolsArea } from './areas/tools/index.ts'
import type { RunningAgent } from './areas/agents/service.ts'
import { type AgentsConfig, readAgentsConfig } from './config.ts'
import { mountAreas } from './context.ts'

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
  home: (ctx) => [
    { rel: 'agents', title: 'The agents and their A2A cards', href: '/agents' },
    {
      rel: 'console',
      title: 'Hire them in the rental’s console',
      href: `${ctx.topology.rental.url}/console`,
    },
    { rel: 'issuer', title: 'The idp that signs their callers’ tokens', href: ctx.topology.idp.url },
  ],
  async build(app, ctx) {
    const context = {
      baseUrl: ctx.baseUrl,
      issuer: ctx.topology.idp.url,
      config: ctx.config,
      version: VERSION,
    }
    const mounted = await mountAreas(app, context, [agentsArea, toolsArea])
    started.set(ctx, mounted.agents!)
  },
  banner(ctx) {
    return [...(started.get(ctx)?.values() ?? [])].map(
      (a) => `agent ${a.definition.id}: ${a.cardUrl} (${a.key.did})`,
    )
  },
}
