import { defineArea } from '../../context.ts'
import { identityRoutes } from './routes.ts'

/**
 * The idp's lifecycle events about the rental's users (POST /webhooks/svc-id): checked against the
 * webhook secret of the console's idp client, acted on once per body. Table: idp_lifecycle_events.
 */
export const identityArea = defineArea({
  name: 'identity',
  needs: ['auth', 'orgs', 'tokens', 'events', 'retention', 'erasure'],
  mount: () => undefined,
  routes(app, ctx, use) {
    identityRoutes(app, {
      db: ctx.db,
      auth: use.auth,
      orgs: use.orgs,
      tokens: use.tokens,
      events: use.events,
      retention: use.retention,
      erasure: use.erasure,
      webhookSecret: () => use.auth.link.webhookSecret(),
    })
  },
})
