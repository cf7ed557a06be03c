import { defineArea } from '../../context.ts'
import { rentalError } from '../../errors.ts'
import type { RentalDb } from '../../db.ts'
import { engagementRoutes } from './routes.ts'
import { checkTaskPrice, configFrom, configOf, type EngagementConfig } from './config.ts'
import { engagementConfigRoutes } from './config-routes.ts'
import { engagementCapacityRoutes } from './capacity-routes.ts'
import { engagementVersionRoutes } from './version-routes.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import {
  checkAgentDid,
  engagementDetail,
  engagementList,
  escrowForTask,
  escrowView,
  hire,
} from './service.ts'
import type { Page } from '@svc/kit'
import type { Actor } from '../events/index.ts'
import type { SlaTeam, SlaTrial } from './bodies.ts'
import * as store from './store.ts'
import * as end from './end-store.ts'
import * as terms from './terms-store.ts'
import type { EngagementRow, EscrowKey, EscrowRow } from './store.ts'
import type { OrgClient } from '../../http/index.ts'

export type { EngagementConfig, EngagementRow, EscrowRow }

/** What other areas may ask of engagements, escrows and revocations (a `trx` keeps it in the caller's transaction). */
export interface EngagementService {
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
  /** Gives a new task its escrow (the package's first, or a new one to sign), in the task's transaction. */
  escrowForTask(
    trx: RentalDb,
    engagement: EngagementRow,
    taskId: string,
    now: Date,
  ): Promise<EscrowRow | undefined>
  escrowOfTask(taskId: string): Promise<EscrowRow | undefined>
  /** The escrows of several tasks, by task id. */
  escrowsOfTasks(taskIds: string[]): Promise<Map<string, EscrowRow>>
  escrowsOf(engagementId: string): Promise<EscrowRow[]>
  /** The organization's escrow by id or task id (refunds); `lock` takes it FOR UPDATE in `trx`. */
  escrowOfOrg(
    orgId: string,
    by: EscrowKey,
    at?: { trx: RentalDb; lock?: boolean },
  ): Promise<EscrowRow | undefined>
  /** The organization's opened escrows (a statement's escrow accounts). */
  openedEscrowsOfOrg(orgId: string): Promise<EscrowRow[]>
  /** The ids of the organization's engagements in one of `states`, oldest first. */
  idsOfOrg(orgId: string, states: readonly EngagementRow['state'][]): Promise<string[]>
  escrowByHash(
    engagementId: string,
    hash: string,
    at?: { trx: RentalDb; lock?: boolean },
  ): Promise<EscrowRow | undefined>
  markReleased(
    trx: RentalDb,
    escrowId: string,
    released: Parameters<typeof store.markReleased>[2],
  ): Promise<void>
  releasesWith(orgId: string, agentDid: string): ReturnType<typeof store.releasesWith>
  /** Released escrows of one engagement or released in [from, to), for invoices (read in `db`, a transaction or not). */
  releasedEscrows(
    db: RentalDb,
    orgId: string,
    scope: Parameters<typeof store.releasedEscrows>[2],
  ): ReturnType<typeof store.releasedEscrows>
  escrowView: typeof escrowView
  isRevoked(orgId: string, agentDid: string): Promise<boolean>
  /** The engagement's current config (the defaults while it has no version), in `db` or a transaction. */
  configOf(db: RentalDb, engagementId: string): Promise<EngagementConfig>
  /**
   * The client's engagement with its current config, in one read (in `at.trx` when given; `lock`
   * takes the engagement FOR UPDATE); undefined when not the organization's.
   */
  termsOf(
    orgId: string,
    id: string,
    at?: { trx: RentalDb; lock?: boolean },
  ): Promise<{ engagement: EngagementRow; config: EngagementConfig } | undefined>
  /** 409 `task_price_over_limit` when the engagement's task price exceeds its `max_task_price_fils`. */
  checkTaskPrice(engagement: EngagementRow, config: EngagementConfig): void
  /** Records the revocation in `trx`; undefined when the client had already revoked the agent. */
  revoke(
    trx: RentalDb,
    orgId: string,
    agentDid: string,
    reason: string,
    at: Date,
  ): Promise<{ revoked_at: Date } | undefined>
  revocationOf(orgId: string, agentDid: string): ReturnType<typeof store.revocationOf>
  /** The engagement's signed addenda (agent versions accepted), oldest first, with bodies and signatures (the export). */
  addendaOf(engagementId: string): Promise<
    Array<{
      from_version: string | null
      to_version: string
      card_hash: string
      body: unknown
      hash: string
      signature: string
      receipt_id: string
      accepted_at: string
    }>
  >
  /** An end's writes (areas/ending), in its transaction: escrows locked, the engagement ended, an escrow returned. */
  end: typeof end
  /** The agent as the catalogue has it and the client's engagements with it; 404 unless one exists, 400 for a DID that is not Ed25519. */
  knownAgent(
    orgId: string,
    agentDid: string,
  ): Promise<{ agent: Awaited<ReturnType<CatalogueService['agent']>>; engagements: EngagementRow[] }>
}

/**
 * Hiring: engagements with their signed SLA and offer package, the escrows that pay for tasks
 * (opened on the rail when signed), and clients' revocations of agents.
 * Tables: engagements, escrows, agent_revocations, engagement_config_versions, agent_versions,
 * engagement_addenda (capacity and agent versions: capacity.ts, versions.ts).
 */
export const engagementsArea = defineArea({
  name: 'engagements',
  needs: ['catalogue', 'events', 'budgets', 'market', 'orgs', 'onboarding'],
  mount: (_app, ctx, use): EngagementService => ({
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
    escrowForTask: (trx, engagement, taskId, now) => escrowForTask(use.budgets, trx, engagement, taskId, now),
    escrowOfTask: (taskId) => store.escrowOfTask(ctx.db, taskId),
    escrowsOfTasks: async (taskIds) =>
      new Map((await store.escrowsOfTasks(ctx.db, taskIds)).map((e) => [e.task_id!, e])),
    escrowsOf: (engagementId) => store.escrowsOf(ctx.db, engagementId),
    escrowOfOrg: (orgId, by, at) => store.escrowOfOrg(at?.trx ?? ctx.db, orgId, by, at?.lock),
    openedEscrowsOfOrg: (orgId) => store.openedEscrowsOfOrg(ctx.db, orgId),
    idsOfOrg: (orgId, states) => store.engagementIdsOf(ctx.db, orgId, states),
    escrowByHash: (engagementId, hash, at) =>
      store.escrowByHash(at?.trx ?? ctx.db, engagementId, hash, at?.lock),
    markReleased: store.markReleased,
    releasesWith: (orgId, did) => store.releasesWith(ctx.db, orgId, did),
    releasedEscrows: store.releasedEscrows,
    escrowView,
    isRevoked: (orgId, did) => store.isRevoked(ctx.db, orgId, did),
    revoke: store.insertRevocation,
    configOf: async (db, id) => (await configOf(ctx, db, id)).config,
    async termsOf(orgId, id, at) {
      const found = await store.engagementWithConfig(at?.trx ?? ctx.db, id, { orgId, lock: at?.lock })
      return found && { engagement: found.engagement, config: configFrom(ctx, found).config }
    },
    checkTaskPrice: (engagement, config) => checkTaskPrice(config, Number(engagement.price_fils)),
    revocationOf: (orgId, did) => store.revocationOf(ctx.db, orgId, did),
    end,
    addendaOf: async (engagementId) =>
      (await terms.addendaOf(ctx.db, engagementId)).map((a) => ({
        from_version: a.from_version,
        to_version: a.to_version,
        card_hash: a.card_hash,
        body: a.body,
        hash: a.hash,
        signature: a.signature,
        receipt_id: a.receipt_id,
        accepted_at: a.accepted_at.toISOString(),
      })),
    async knownAgent(orgId, did) {
      checkAgentDid(did)
      const agent = await use.catalogue.agent(did)
      const engagements = await store.engagementsWith(ctx.db, orgId, did)
      if (!agent && engagements.length === 0) throw rentalError('agent_not_found', `no agent ${did}`)
      return { agent, engagements }
    },
  }),
  routes(app, ctx, use) {
    // budgets cannot need engagements (a cycle): they learn here whether an engagement is the organization's
    use.budgets.engagementsWith(
      async (orgId, id) => (await store.engagementOf(ctx.db, orgId, id)) !== undefined,
    )
    engagementRoutes(app, ctx, use.catalogue, use.events, use.budgets, use.market, use.onboarding)
    engagementConfigRoutes(app, ctx, use.events)
    engagementCapacityRoutes(app, ctx, use.events, use.market)
    engagementVersionRoutes(app, ctx, use.events, use.catalogue, use.orgs)
  },
})
