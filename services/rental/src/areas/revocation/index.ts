import { defineArea } from '../../context.ts'
import { revocationRoutes } from './routes.ts'
import { revokeAnswer } from './service.ts'

export interface RevocationService {
  /** The id of the client's `agent.revoked` receipt for the agent, if it revoked it through the kill switch. */
  receiptIdOf(subject: string, agentDid: string): Promise<string | undefined>
}

/**
 * The kill switch: the client revokes an agent (engagements keeps the revocation), its unfinished
 * tasks fail (tasks), an `agent.revoked` receipt is recorded, all in one transaction; a second
 * revoke answers the first (kept with the kit's idempotent answers). No tables of its own.
 */
export const revocationArea = defineArea({
  name: 'revocation',
  needs: ['engagements', 'tasks', 'outbox'],
  mount: (_app, ctx, use): RevocationService => ({
    receiptIdOf: async (subject, did) =>
      (await revokeAnswer({ ctx, ...use }, subject, did))?.receipt?.id ?? undefined,
  }),
  routes(app, ctx, use) {
    revocationRoutes(app, { ctx, ...use })
  },
})
