import { defineArea } from '../../context.ts'
import { auditHooks } from './hooks.ts'
import { auditRoutes } from './routes.ts'

export type { AuditCaller } from './record.ts'
export { REQUEST_EVENT } from './record.ts'

/**
 * The audit record: one `request.answered` event per S+C call and per mutating A2A call (its
 * hooks, written after the answer), and `GET /api/audit` over the organization's events. No
 * tables: the events area's log is the record.
 */
export const auditArea = defineArea({
  name: 'audit',
  needs: ['events', 'orgs'],
  mount(app, ctx, use) {
    auditHooks(app, ctx, use)
    return undefined
  },
  routes(app, ctx, use) {
    auditRoutes(app, use.events)
  },
})
