import type { MoneyLocale as Lang } from '@svc/kit'
import { defineArea } from '../../context.ts'
import { NO_MODELS } from '../../reactions.ts'
import type { ModelsOf } from '../models/index.ts'
import type { OrgService } from '../orgs/index.ts'
import { catalogueRoutes } from './routes.ts'
import { seedJobs, startSeeding } from './service.ts'
import type { RentalDb } from '../../db.ts'
import {
  agentByDid,
  agentCardUrl,
  agentNames,
  cardUrlColumn,
  jobTitles,
  type AgentRow,
  catalogue,
  catalogueAgent,
  isProviderOf,
  jobAndAgent,
  registerAgent,
} from './store.ts'

export { type CatalogueNames, catalogueNameColumns, catalogueNamesIn } from './names-beside.ts'

/** The provider organization that publishes an agent, as the catalogue and agent views show it. */
export interface ProviderRef {
  id: string
  name: string
}

type Catalogue = Awaited<ReturnType<typeof catalogue>>
type WithProvider<A> = Omit<A, 'provider_org_id'> & { provider: ProviderRef }
export type CatalogueJob = Omit<Catalogue[number], 'agents'> & {
  agents: Array<WithProvider<Catalogue[number]['agents'][number]>>
}
export type CatalogueAgent = WithProvider<NonNullable<Awaited<ReturnType<typeof catalogueAgent>>>>

export interface CatalogueService {
  /** Every job with the agents that serve it, each with its provider, in `lang` (default English). */
  catalogue(lang?: Lang): Promise<CatalogueJob[]>
  /** The job and, when it serves the job, the agent with that DID. */
  jobAndAgent(jobId: string, agentDid: string): ReturnType<typeof jobAndAgent>
  /** The agent with that DID, its provider and the jobs it serves, in `lang` (default English), or undefined. */
  agent(did: string, lang?: Lang): Promise<CatalogueAgent | undefined>
  /**
   * The job's title in `lang` (English where it has no Arabic), or undefined for an unknown job.
   * For a list, `titlesOf` answers all in one query.
   */
  titleOf(jobId: string, lang: Lang): Promise<string | undefined>
  /** The titles of those jobs in `lang`, by job id (an unknown id is absent). */
  titlesOf(jobIds: readonly string[], lang: Lang): Promise<Map<string, string>>
  /**
   * The display name of the catalogue's agent with that DID in `lang` (English where it has no
   * Arabic), or undefined for a DID the catalogue does not hold. For a list, `agentNamesOf`.
   */
  agentNameOf(did: string, lang: Lang): Promise<string | undefined>
  /** The display names of those agents in `lang`, by DID (an unknown DID is absent). */
  agentNamesOf(dids: readonly string[], lang: Lang): Promise<Map<string, string>>
  /** The URL of the agent's A2A card, or undefined when it is not in the catalogue. */
  cardUrl(did: string): Promise<string | undefined>
  /**
   * Whether the organization is the provider that publishes the agent with that DID (false for an
   * agent not in the catalogue): the check of providers' own actions.
   */
  isProviderOf(orgId: string, agentDid: string): Promise<boolean>
  /** The agent with that DID (its id and provider organization), in `db` or a transaction. */
  agentByDid(db: RentalDb, did: string): ReturnType<typeof agentByDid>
  /** An external agent (market) stored in `trx`, serving `jobIds`: answers those that exist. */
  registerAgent(trx: RentalDb, agent: AgentRow, jobIds: string[]): Promise<string[]>
  /** Each agent's declared models, by DID (none before the models area gave its lookup). */
  modelsOf: ModelsOf
}

/** A read's column of its agent's card URL (the engagement's terms a task runs under read it so). */
export { cardUrlColumn }

/** Each `provider_org_id` replaced by the provider's id and name (from the orgs service). */
async function withProviders<A extends { provider_org_id: string }>(
  orgs: OrgService,
  agents: A[],
): Promise<Array<WithProvider<A>>> {
  const names = new Map((await orgs.orgs(agents.map((a) => a.provider_org_id))).map((o) => [o.id, o.name]))
  return agents.map(({ provider_org_id, ...agent }) => ({
    ...agent,
    provider: { id: provider_org_id, name: names.get(provider_org_id) ?? provider_org_id },
  }))
}

/**
 * The jobs on offer and the agents that serve them (seeded in development), each agent published
 * by a provider organization (the built-in ones by the platform's, `org_platform`).
 * Tables: jobs, agents, job_agents.
 */
export const catalogueArea = defineArea({
  name: 'catalogue',
  needs: ['orgs'],
  async mount(app, ctx, use): Promise<CatalogueService> {
    if (ctx.config.seed) {
      await seedJobs(ctx.db)
      const seeding = startSeeding(ctx.db, ctx.topology.agents.url, ctx.log)
      app.addHook('onClose', async () => seeding.stop())
    }
    return {
      async catalogue(lang = 'en') {
        const jobs = await catalogue(ctx.db, lang)
        const agents = await withProviders(
          use.orgs,
          jobs.flatMap((j) => j.agents),
        )
        let at = 0
        return jobs.map((job) => ({ ...job, agents: job.agents.map(() => agents[at++]!) }))
      },
      jobAndAgent: (jobId, agentDid) => jobAndAgent(ctx.db, jobId, agentDid),
      async agent(did, lang = 'en') {
        const agent = await catalogueAgent(ctx.db, did, lang)
        return agent && (await withProviders(use.orgs, [agent]))[0]
      },
      titleOf: async (jobId, lang) => (await jobTitles(ctx.db, [jobId], lang)).get(jobId),
      titlesOf: (jobIds, lang) => jobTitles(ctx.db, jobIds, lang),
      agentNameOf: async (did, lang) => (await agentNames(ctx.db, [did], lang)).get(did),
      agentNamesOf: (dids, lang) => agentNames(ctx.db, dids, lang),
      cardUrl: (did) => agentCardUrl(ctx.db, did),
      isProviderOf: (orgId, agentDid) => isProviderOf(ctx.db, orgId, agentDid),
      agentByDid,
      registerAgent,
      modelsOf: (dids) => ctx.reactions.one('models.of', NO_MODELS)(dids),
    }
  },
  routes(app, ctx, _use, own) {
    catalogueRoutes(app, own)
  },
})
