import { defineArea } from '../../context.ts'
import { LedgerReader } from './ledger.ts'
import { proveReceipts } from './proofs.ts'
import { recordRoutes } from './routes.ts'

export type { LedgerView, ProvedReceipt } from './proofs.ts'

export interface RecordService {
  /**
   * The receipts' RFC 9162 inclusion proofs against the ledger's latest checkpoint (read once),
   * each checked here, with that checkpoint and the log key: what a reader needs to check them offline.
   */
  proofs(receiptIds: string[]): ReturnType<typeof proveReceipts>
}

/**
 * The agents' record as a client sees it: its slice of the agent's receipts with inclusion
 * proofs, the signed AgentCV and the evidence packs. No tables: it reads the areas that hold the facts.
 */
export const recordArea = defineArea({
  name: 'record',
  needs: ['engagements', 'tasks', 'outbox', 'revocation', 'ratings'],
  mount(_app, ctx, use): RecordService {
    // one reader for the process: it pins the log key on first sight
    const ledger = new LedgerReader(ctx.topology.ledger.url)
    readers.set(ctx, ledger)
    return { proofs: (ids) => proveReceipts(ledger, use.outbox, ids) }
  },
  routes(app, ctx, use) {
    recordRoutes(app, { ctx, ...use, ledger: readers.get(ctx)! })
  },
})

const readers = new WeakMap<object, LedgerReader>()
