import { defineArea } from '../../context.ts'
import { LedgerReader } from './ledger.ts'
import { recordRoutes } from './routes.ts'

/**
 * The agents' record as a client sees it: its slice of the agent's receipts with inclusion
 * proofs, the signed AgentCV and the evidence packs. No tables: it reads the areas that hold the facts.
 */
export const recordArea = defineArea({
  name: 'record',
  needs: ['engagements', 'tasks', 'outbox', 'revocation', 'ratings'],
  mount: () => undefined,
  routes(app, ctx, use) {
    recordRoutes(app, { ctx, ...use, ledger: new LedgerReader(ctx.topology.ledger.url) }, ctx.sessions)
  },
})
