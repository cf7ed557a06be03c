import { defineArea } from '../../context.ts'
import { metadataForTask } from './hops.ts'
import { teamRoutes } from './routes.ts'
import type { TeamDeps } from './service.ts'

/**
 * Teams: a lead agent and members bound by team terms, hired as one engagement on the lead whose
 * SLA binds the terms; a team task's delegations go through the rental over A2A (/api/team-hops/a2a), each
 * hop authorised, run over A2A, signed by its agent and receipted (`team.hop`).
 * Tables: teams, team_hops.
 */
export const teamsArea = defineArea({
  name: 'teams',
  needs: ['engagements', 'catalogue', 'tasks', 'events', 'ending', 'record'],
  mount(_app, ctx, use) {
    const deps: TeamDeps = { ctx, ...use }
    ctx.reactions.on('tasks.message', (task, engagement) => metadataForTask(deps, task, engagement))
    return undefined
  },
  routes(app, ctx, use) {
    teamRoutes(app, { ctx, ...use })
  },
})
