import { defineArea } from '../../context.ts'
import { tenantAuth } from '../tenant/auth.ts'
import { exportRoutes } from './routes.ts'
import { type ExportDeps, startExportWorker } from './service.ts'

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
  ],
  async mount(_app, ctx, use) {
    const deps: ExportDeps = {
      db: ctx.db,
      jobs: ctx.jobs,
      sealer: ctx.sealer,
      now: ctx.now,
      log: ctx.log,
      events: use.events,
      sections: use,
    }
    await startExportWorker(deps)
    return deps
  },
  routes(app, ctx, use, own) {
    exportRoutes(app, own, tenantAuth(use.tokens, ctx.sessions))
  },
})
