import { defineArea } from '../../context.ts'
import type { Actor } from '../events/index.ts'
import { egressRoutes } from './routes.ts'
import { checkEgress, type EgressCheck, type EgressDeps } from './service.ts'

export type { EgressTables } from './store.ts'

export interface EgressService {
  /**
   * Throws 403 `egress_refused` (recorded as `egress.refused`) when the engagement's egress policy
   * does not let its outbound calls reach `url`; call outside any transaction. Answers the
   * addresses the name resolved to and were checked, for the connection to be pinned to.
   */
  checkEgress(
    engagementId: string,
    url: string,
    options: { allowPrivate: boolean; actor: Actor },
  ): Promise<EgressCheck>
}

/**
 * Web-tool and egress policies per engagement, each versioned (If-Match): the web tools' allowed
 * and denied domains and limits, and the hosts and ports its outbound calls may reach (connect's
 * tool-server calls check it). Table: rental_engagement_policies.
 */
export const egressArea = defineArea({
  name: 'egress',
  needs: ['engagements', 'events'],
  mount(_app, ctx, use): EgressService {
    const deps: EgressDeps = { ...ctx, engagements: use.engagements, events: use.events }
    egressDeps.set(ctx, deps)
    return { checkEgress: (id, url, options) => checkEgress(deps, id, url, options) }
  },
  routes(app, ctx) {
    egressRoutes(app, egressDeps.get(ctx)!)
  },
})

const egressDeps = new WeakMap<object, EgressDeps>()
