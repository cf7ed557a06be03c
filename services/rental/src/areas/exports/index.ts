import { defineArea } from '../../context.ts'
import { tenantAuth } from '../tenant/index.ts'
import { exportRoutes } from './routes.ts'
import type { RentalDb } from '../../db.ts'
import { type ExportDeps, startExportWorker } from './service.ts'
import { deleteExportsOf } from './store.ts'

export interface ExportService {
  readonly deps: ExportDeps
  /** Erasure: the organization's exports and their sealed archives deleted, in `trx`; how many. */
  eraseOrg(trx: RentalDb, orgId: string): Promise<number>
}

/**
 * The server-side tenant export (POST /v1/tenant/exports): a durable job gathers the organization's
 * records through each area's service into one zip (a manifest and a JSON file per section), kept
 * sealed for seven days; its progress is polled, its archive downloaded by owners and admins
 * (`exports:write`). Table: tenant_exports.
 */
export const exportsArea = defineArea({
  name: 'exports',
  needs: [
    'orgs',
    'events',
    'tokens',
    'tenant',
    'engagements',
    'tasks',
    'approvals',
    'invoices',
    'refunds',
    'webhooks',
    'connect',
    'budgets',
    'disputes',
    'incidents',
    'schedules',
    'statements',
    'retention',
  ],
  async mount(_app, ctx, use): Promise<ExportService> {
    const deps: ExportDeps = {
      db: ctx.db,
      jobs: ctx.jobs,
      sealer: ctx.sealer,
      now: ctx.now,
      log: ctx.log,
      events: use.events,
      sections: { ...use, now: ctx.now },
    }
    await startExportWorker(deps)
    return { deps, eraseOrg: deleteExportsOf }
  },
  routes(app, ctx, use, own) {
    exportRoutes(app, own.deps, tenantAuth(use.tokens, ctx.sessions))
  },
})
