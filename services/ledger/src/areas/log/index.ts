import { Histogram, type Registry } from '@svc/kit'
import { defineArea } from '../../context.ts'
import { publishEmptyCheckpoint } from './genesis.ts'
import { logRoutes } from './routes.ts'
import { Sequencer } from './sequencer.ts'

/**
 * The log's reads other areas share, over any handle (a transaction's too): the tree's size, its
 * stored subtrees, its signed checkpoints and its leaves. Only this area writes its tables.
 */
export { latestSignedCheckpoint, leavesBetween, nodeReader, signedCheckpointOf, treeState } from './store.ts'

export interface LogService {
  readonly sequencer: Sequencer
}

/**
 * Appending: signed receipts pooled and integrated in batches (leaves, subtrees, root, signed
 * checkpoint in one transaction). Tables: tree_state, leaves, tree_nodes, checkpoints.
 */
export const logArea = defineArea({
  name: 'log',
  needs: ['webhooks', 'witness'],
  async mount(app, ctx, use): Promise<LogService> {
    await publishEmptyCheckpoint(ctx.db, ctx.config.origin, ctx.keys.signer)
    const sequencer = new Sequencer(ctx.db, {
      onBatch: (trx, from, to) => use.webhooks.enqueue(trx, from, to),
      onPublished: () => use.witness.poke(),
      origin: ctx.config.origin,
      signer: ctx.keys.signer,
      batchMax: ctx.config.batchMax,
      batchWaitMs: ctx.config.batchWaitMs,
      log: ctx.log,
      observe: batchMetrics(app.metrics),
    })
    // appends already accepted are integrated and answered before the database closes
    app.addHook('preClose', async () => {
      await sequencer.drain()
      use.witness.close()
    })
    return { sequencer }
  },
  routes(app, ctx, _use, own) {
    logRoutes(app, ctx.config, own.sequencer)
  },
})

/** `ledger_batch_size` and `ledger_checkpoint_lag_seconds` (an append's wait until its signed checkpoint committed). */
function batchMetrics(registry: Registry) {
  const size = new Histogram({
    name: 'ledger_batch_size',
    help: 'Appends integrated per batch (one transaction, one signed checkpoint)',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200],
    registers: [registry],
  })
  const lag = new Histogram({
    name: 'ledger_checkpoint_lag_seconds',
    help: 'From the oldest append of a batch arriving to the checkpoint that includes it being committed',
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  })
  return (appends: number, lagMs: number) => {
    size.observe(appends)
    lag.observe(lagMs / 1000)
  }
}
