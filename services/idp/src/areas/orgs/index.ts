import { defineArea } from '../../context.ts'
import { orgAdminRoutes } from './admin-routes.ts'
import { orgClientRoutes } from './client-routes.ts'
import { memberRoutes } from './member-routes.ts'
import { registerRoutes } from './register.ts'
import { orgResourceRoutes } from './resource-routes.ts'
import { orgRoutes } from './routes.ts'

export { memberNeedsMfa, orgClaim } from './members.ts'
import type { ScreeningDeps } from './screening.ts'
export { ledgerHistory, screenAgent, type ScreeningDeps } from './screening.ts'
import { orgsService } from './service.ts'

/** What other areas ask of organizations: one by id, forgetting a member, the screening of agents. */
export type OrgsService = typeof orgsService & { screening: ScreeningDeps }

/** Organizations: sign-up, KYB, their clients, resources and members; screening of agents. */
export const orgsArea = defineArea({
  name: 'orgs',
  needs: ['keys', 'receipts', 'email', 'accounts', 'clients', 'resources'],
  mount(app, ctx, { keys, receipts, email, accounts, clients, resources }): OrgsService {
    const { db, sealer, issuer } = ctx
    orgAdminRoutes(app, db, ctx.config.adminToken)
    orgClientRoutes(app, { db, clients, sealer, issuer, allowPrivate: ctx.config.fetchAllowPrivate })
    registerRoutes(app, { db, clients, sealer, allowPrivate: ctx.config.fetchAllowPrivate })
    orgResourceRoutes(app, { db, resources })
    const screening = { db, receipts, ledger: ctx.ledger }
    const kyb = {
      db,
      keys,
      issuer,
      allowPrivate: ctx.config.fetchAllowPrivate,
      ownerDocumentUrl: ctx.config.ownerDocumentUrl,
    }
    orgRoutes(app, {
      ...screening,
      kyb,
      sealer,
      kv: ctx.kv,
      signupRatePerMinute: ctx.config.registerRatePerMinute,
    })
    memberRoutes(app, {
      db,
      mailer: email,
      accounts,
      issuer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
    })
    return { ...orgsService, screening }
  },
})
