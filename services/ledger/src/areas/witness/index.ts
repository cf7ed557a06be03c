import { defineArea } from '../../context.ts'
import { witnessSet } from './discovery.ts'
import { WitnessPusher } from './pusher.ts'
import { witnessRoutes } from './routes.ts'

export interface WitnessService {
  /** Asks the witnesses to cosign the latest checkpoint (after a batch grew the tree). */
  poke(): void
  close(): void
  /** Every witness key the log accepts cosignatures from. */
  keys(): string[]
}

/** Witness cosignatures: asked for each new checkpoint, accepted and served with it. Table: cosignatures. */
export const witnessArea = defineArea({
  name: 'witness',
  mount(app, ctx): WitnessService {
    const witnesses = witnessSet(ctx.config)
    const pusher = new WitnessPusher(ctx.db, witnesses, ctx.log, ctx.config.witnessIntervalMs)
    // a checkpoint published while the witnesses were away is shown to them now
    app.addHook('onReady', async () => pusher.poke())
    return { poke: () => pusher.poke(), close: () => pusher.close(), keys: () => witnesses.keys() }
  },
  routes(app, ctx, _use, own) {
    witnessRoutes(app, ctx.db, own.keys)
  },
})
