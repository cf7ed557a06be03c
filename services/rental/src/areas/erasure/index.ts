import { defineArea } from '../../context.ts'
import { erasureRoutes } from './routes.ts'
import type { Actor } from '../events/index.ts'
import { type ErasureDeps, eraseForDeletedOwner } from './service.ts'

export interface ErasureService {
  /** What the erasure route works with. */
  readonly deps: ErasureDeps
  /** Erases the organization whose last owner the idp deleted, when it asked for that (areas/identity). */
  eraseForDeletedOwner(orgId: string, actor: Actor): ReturnType<typeof eraseForDeletedOwner>
}

/**
 * Erasure of a client (POST /api/clients/erase): the organization's personal data deleted through
 * each area's service, its money records and receipts kept under a pseudonym, a `data.erased`
 * receipt. Table: client_erasures (the answer, for a second call).
 */
export const erasureArea = defineArea({
  name: 'erasure',
  needs: [
    'orgs',
    'auth',
    'tokens',
    'webhooks',
    'files',
    'tasks',
    'engagements',
    'disputes',
    'ratings',
    'incidents',
    'ending',
    'events',
    'outbox',
    'retention',
    'exports',
  ],
  mount(_app, ctx, use): ErasureService {
    const deps: ErasureDeps = { ctx, ...use }
    return { deps, eraseForDeletedOwner: (orgId, actor) => eraseForDeletedOwner(deps, orgId, actor) }
  },
  routes(app, ctx, _use, own) {
    erasureRoutes(app, ctx, own.deps)
  },
})
