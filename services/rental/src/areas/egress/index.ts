import { defineArea } from '../../context.ts'
import type { Actor } from '../events/index.ts'
import { egressRoutes } from './routes.ts'
import {
  checkEgress,
  type EgressCheck,
  type EgressDeps,
  hasWebPolicy,
  hostMatches,
  type WebPolicy,
} from './service.ts'
import { latestPolicy } from './store.ts'

export type { EgressTables } from './store.ts'
export type { WebPolicy } from './service.ts'
/** Whether the engagement (its row, as a task's run read it) has a web policy: no read. */
export { hasWebPolicy }

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
  /** The engagement's web-tool policy and its version, or undefined before one is set. */
  webPolicy(engagementId: string): Promise<{ version: number; policy: WebPolicy } | undefined>
  /** `*.example.com` matches the subdomains of example.com; anything else matches exactly. */
  hostMatches(pattern: string, host: string): boolean
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
    return {
      checkEgress: (id, url, options) => checkEgress(deps, id, url, options),
      webPolicy: async (id) => {
        const row = await latestPolicy(deps.db, id, 'web')
        return row ? { version: row.version, policy: row.policy as WebPolicy } : undefined
      },
      hostMatches,
    }
  },
  routes(app, ctx) {
    egressRoutes(app, egressDeps.get(ctx)!)
  },
})

const egressDeps = new WeakMap<object, EgressDeps>()
