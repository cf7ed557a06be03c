import { defineArea } from '../../context.ts'
import { adminRoutes } from './admin-routes.ts'
import { tenantAuth } from './auth.ts'
import type { TenantDeps } from './deps.ts'
import { opsRoutes } from './ops-routes.ts'
import { resolveSecret, secretList } from './secrets.ts'

export { tenantAuth } from './auth.ts'

export interface TenantService {
  /**
   * The plaintext a `secret://name` reference names in the organization's vault (connections and
   * webhooks use secrets by reference; no route answers a value). Undefined: malformed or unknown.
   */
  resolveSecret(orgId: string, reference: string): Promise<string | undefined>
  /** The vault's secrets as GET /v1/secrets lists them: names, versions and times, never values. */
  secrets(orgId: string): ReturnType<typeof secretList>
}

/**
 * The tenant API (`/v1`): the console's operations views and its administration, authenticated by
 * the console session (CSRF on writes) or by an organization key (`ork_…`, the tokens area's),
 * whose scopes are checked per route. Table: tenant_secrets (the vault).
 */
export const tenantArea = defineArea({
  name: 'tenant',
  needs: ['orgs', 'events', 'tokens', 'tasks', 'approvals', 'engagements', 'connect', 'onboarding', 'outbox'],
  mount(app, ctx): TenantService {
    app.decorateRequest('orgKey', null)
    return {
      resolveSecret: (orgId, reference) => resolveSecret(ctx.db, ctx.sealer, orgId, reference),
      secrets: (orgId) => secretList(ctx.db, orgId),
    }
  },
  routes(app, ctx, use) {
    const deps: TenantDeps = {
      db: ctx.db,
      sealer: ctx.sealer,
      now: ctx.now,
      ledgerUrl: ctx.topology.ledger.url,
      idpUrl: ctx.topology.idp.url,
      providerDid: ctx.provider.did,
      auth: tenantAuth(use.tokens, ctx.sessions),
      events: use.events,
      orgs: use.orgs,
      tokens: use.tokens,
      tasks: use.tasks,
      approvals: use.approvals,
      engagements: use.engagements,
      connect: use.connect,
      onboarding: use.onboarding,
      outbox: use.outbox,
    }
    opsRoutes(app, deps)
    adminRoutes(app, deps)
  },
})
