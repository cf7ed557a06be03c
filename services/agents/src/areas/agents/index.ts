import { defineArea } from '../../context.ts'
import { CallerVerifier } from './callers.ts'
import { agentRoutes } from './routes.ts'
import { startAgents } from './service.ts'

export { CallerVerifier, Unauthenticated } from './callers.ts'

/** The built-in agents, each an A2A server with its own did:key; callers authenticate with an idp token. */
export const agentsArea = defineArea({
  name: 'agents',
  mount(app, ctx) {
    const running = startAgents(ctx.baseUrl, ctx.issuer, ctx.config, ctx.version)
    agentRoutes(app, running, new CallerVerifier({ issuer: ctx.issuer, audience: ctx.baseUrl }))
    return running
  },
})
