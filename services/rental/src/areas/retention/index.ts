import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { retentionRoutes } from './routes.ts'
import { holdFor, holdView, policyOf, type RetentionDeps, retentionView } from './service.ts'
import { activeHolds as allActiveHoldsOf, allActiveHolds } from './store.ts'
import { startSweeps } from './sweep.ts'

export interface RetentionService {
  /** What the retention routes work with. */
  readonly deps: RetentionDeps
  /** The organization's policy and holds, as GET /api/retention answers them (the tenant export). */
  view(orgId: string): ReturnType<typeof retentionView>
  /**
   * The legal hold standing over the organization's data, or over that engagement's (read in `db`,
   * a transaction or not), or undefined: what a deletion (erasure, a file's DELETE) refuses under,
   * 409 `legal_hold`.
   */
  holdFor(
    orgId: string,
    engagementId?: string | null,
    db?: RentalDb,
  ): Promise<ReturnType<typeof holdView> | undefined>
  /** Any active hold over the organization or one of its engagements (read in `db`): what erasure refuses under. */
  anyHoldOf(orgId: string, db?: RentalDb): Promise<ReturnType<typeof holdView> | undefined>
  /** Whether the organization asked to be erased when the idp deletes its last owner. */
  erasesOnOwnerDeletion(orgId: string): Promise<boolean>
}

/**
 * Retention and legal holds: each organization's retention policy (how long task texts and
 * outputs, files and events are kept), the job that deletes what has expired through the owning
 * areas, and legal holds that stop every deletion until released. Tables: retention_policies,
 * retention_holds, retention_sweep.
 */
export const retentionArea = defineArea({
  name: 'retention',
  needs: ['events', 'orgs', 'engagements', 'tasks', 'files'],
  async mount(_app, ctx, use): Promise<RetentionService> {
    const deps: RetentionDeps = { ctx, ...use }
    // a file's DELETE consults the holds too
    ctx.reactions.on('files.hold', async (trx, orgId, engagementId) => holdFor(trx, orgId, engagementId))
    // and so does the tasks' purge of outputs past RENTAL_OUTPUT_TTL_S
    ctx.reactions.on('tasks.held', async () => {
      const holds = await allActiveHolds(ctx.db)
      return {
        orgs: holds.filter((h) => h.engagement_id === null).map((h) => h.org_id),
        engagements: holds.flatMap((h) => (h.engagement_id ? [h.engagement_id] : [])),
      }
    })
    await startSweeps(deps)
    return {
      deps,
      view: (orgId) => retentionView(deps, orgId),
      holdFor: async (orgId, engagementId, db) => {
        const row = await holdFor(db ?? ctx.db, orgId, engagementId)
        return row && holdView(row)
      },
      erasesOnOwnerDeletion: async (orgId) => (await policyOf(ctx.db, orgId)).erase_on_owner_deletion,
      anyHoldOf: async (orgId, db) => {
        const [row] = await allActiveHoldsOf(db ?? ctx.db, orgId)
        return row && holdView(row)
      },
    }
  },
  routes(app, _ctx, _use, own) {
    retentionRoutes(app, own.deps)
  },
})
