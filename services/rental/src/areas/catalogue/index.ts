import { defineArea } from '../../context.ts'
import { catalogueRoutes } from './routes.ts'
import { seedJobs, startSeeding } from './service.ts'
import { catalogue, catalogueAgent, jobAndAgent } from './store.ts'

export interface CatalogueService {
  /** Every job with the agents that serve it. */
  catalogue(): ReturnType<typeof catalogue>
  /** The job and, when it serves the job, the agent with that DID. */
  jobAndAgent(jobId: string, agentDid: string): ReturnType<typeof jobAndAgent>
  /** The agent with that DID and the jobs it serves, or undefined. */
  agent(did: string): ReturnType<typeof catalogueAgent>
}

/** The jobs on offer and the agents that serve them (seeded in development). Tables: jobs, agents, job_agents. */
export const catalogueArea = defineArea({
  name: 'catalogue',
  async mount(app, ctx): Promise<CatalogueService> {
    if (ctx.config.seed) {
      await seedJobs(ctx.db)
      const seeding = startSeeding(ctx.db, ctx.topology.agents.url, ctx.log)
      app.addHook('onClose', async () => seeding.stop())
    }
    return {
      catalogue: () => catalogue(ctx.db),
      jobAndAgent: (jobId, agentDid) => jobAndAgent(ctx.db, jobId, agentDid),
      agent: (did) => catalogueAgent(ctx.db, did),
    }
  },
  routes(app, ctx, _use, own) {
    catalogueRoutes(app, own, ctx.sessions)
  },
})
