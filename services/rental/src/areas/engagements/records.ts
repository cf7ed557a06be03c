import type { MoneyLocale as Lang, Page } from '@svc/kit'
import type { RentalContext, RentalServices } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { Actor } from '../events/index.ts'
import type { OrgClient } from '../../http/index.ts'
import type { SlaTeam, SlaTrial } from './bodies.ts'
import { checkAgentDid, engagementDetail, engagementList, hire } from './service.ts'
import * as store from './store.ts'
import type { EngagementRow } from './store.ts'

/** What hiring uses: the catalogue's jobs and agents, the events, budgets, market listing and onboarding gate. */
export type HiringNeeds = Pick<RentalServices, 'catalogue' | 'events' | 'budgets' | 'market' | 'onboarding'>

/** What other areas may ask of engagements themselves: hiring, reading them, and who the client is. */
export interface EngagementRecords {
  /** The organization's engagements, a page of them, as GET /api/engagements lists them (the tenant export). */
  list(orgId: string, page: Page): ReturnType<typeof engagementList>
  /**
   * Hires as POST /api/engagements does (the pending engagement and its package); `trial`: the
   * trial it converts, named in the SLA body, whose `claim` runs in the hire's transaction.
   */
  hire(
    client: OrgClient,
    input: { job_id: string; agent_did: string; client_did?: string | undefined },
    actor: Actor,
    trial?: { body: SlaTrial; claim: (trx: RentalDb, engagementId: string) => Promise<void> },
    team?: { body: SlaTeam; claim: (trx: RentalDb, engagementId: string) => Promise<void> },
  ): ReturnType<typeof hire>
  /** The engagement with its escrows and package, as hiring answers it (404 when not the organization's). */
  detail(orgId: string, id: string): ReturnType<typeof engagementDetail>
  /** The client's engagement, or undefined; `lock` takes it FOR UPDATE in `trx`. */
  engagementOf(
    orgId: string,
    id: string,
    at?: { trx: RentalDb; lock?: boolean },
  ): Promise<EngagementRow | undefined>
  /** The ids of the agent's latest `limit` activated engagements, across all clients (insurance pricing). */
  activatedIdsWithAgent(agentDid: string, limit: number): Promise<string[]>
  /** The client's engagements with the agent (read in `at.trx` when given). */
  engagementsWith(orgId: string, agentDid: string, at?: { trx?: RentalDb }): Promise<EngagementRow[]>
  latestClientDid(orgId: string, agentDid: string): Promise<string | undefined>
  /** The client DID of the organization's latest engagement, with any agent. */
  latestClientDidOfOrg(orgId: string): Promise<string | undefined>
  /** The job of each of these engagements, by engagement id (the tasks' rows name them). */
  jobIdsOf(ids: readonly string[]): Promise<Map<string, string>>
  /** The ids of the organization's engagements in one of `states`, oldest first. */
  idsOfOrg(orgId: string, states: readonly EngagementRow['state'][]): Promise<string[]>
  /**
   * The agent as the catalogue has it (its words in `lang`, default English) and the client's
   * engagements with it; 404 unless one exists, 400 for a DID that is not Ed25519.
   */
  knownAgent(
    orgId: string,
    agentDid: string,
    lang?: Lang,
  ): Promise<{ agent: Awaited<ReturnType<CatalogueService['agent']>>; engagements: EngagementRow[] }>
}

export const engagementRecords = (ctx: RentalContext, use: HiringNeeds): EngagementRecords => ({
  hire: (client, input, actor, trial, team) =>
    hire(
      ctx,
      use.catalogue,
      {
        client,
        events: use.events,
        budgets: use.budgets,
        market: use.market,
        onboarding: use.onboarding,
        actor,
      },
      input,
      trial,
      team,
    ),
  detail: (orgId, id) => engagementDetail(ctx.db, orgId, id),
  list: (orgId, page) => engagementList(ctx.db, orgId, page),
  engagementOf: (orgId, id, at) => store.engagementOf(at?.trx ?? ctx.db, orgId, id, at?.lock),
  activatedIdsWithAgent: (did, limit) => store.activatedIdsWithAgent(ctx.db, did, limit),
  engagementsWith: (orgId, did, at) => store.engagementsWith(at?.trx ?? ctx.db, orgId, did),
  latestClientDid: (orgId, did) => store.latestClientDid(ctx.db, orgId, did),
  latestClientDidOfOrg: (orgId) => store.latestClientDidOfOrg(ctx.db, orgId),
  jobIdsOf: (ids) => store.jobIdsOf(ctx.db, ids),
  idsOfOrg: (orgId, states) => store.engagementIdsOf(ctx.db, orgId, states),
  async knownAgent(orgId, did, lang) {
    checkAgentDid(did)
    const agent = await use.catalogue.agent(did, lang)
    const engagements = await store.engagementsWith(ctx.db, orgId, did)
    if (!agent && engagements.length === 0) throw rentalError('agent_not_found', `no agent ${did}`)
    return { agent, engagements }
  },
})
