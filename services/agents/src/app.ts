import type { ServiceSpec } from '@svc/kit'
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
  readConfig: readAgentsConfig,
  async build(app, ctx) {
    const running = startAgents(ctx.baseUrl, ctx.config, VERSION)
    started.set(ctx, running)
    agentRoutes(app, running)
  },
  banner(ctx) {
    return [...(started.get(ctx)?.values() ?? [])].map(
      (a) => `agent ${a.definition.id}: ${a.cardUrl} (${a.key.did})`,
    )
  },
}
