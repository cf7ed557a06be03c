import { fileURLToPath } from 'node:url'
import { Jobs, type ServiceSpec } from '@svc/kit'
import type { Kysely } from 'kysely'
import { keyRoutes } from './areas/key/routes.ts'
import { publishEmptyCheckpoint } from './areas/log/genesis.ts'
import { logRoutes } from './areas/log/routes.ts'
import { Sequencer } from './areas/log/sequencer.ts'
import { readRoutes } from './areas/read/routes.ts'
import { searchRoutes } from './areas/search/routes.ts'
import { webhookRoutes } from './areas/webhooks/routes.ts'
import { enqueueDeliveries } from './areas/webhooks/service.ts'
import { witnessSet } from './areas/witness/discovery.ts'
import { WitnessPusher } from './areas/witness/pusher.ts'
import { witnessRoutes } from './areas/witness/routes.ts'
import { type LedgerConfig, readLedgerConfig } from './config.ts'
import type { LedgerTables } from './db.ts'
import { logKeys } from './keys.ts'

export const ledger: ServiceSpec<LedgerConfig> = {
  name: 'ledger',
  version: '0.1.0',
  description:
    'The append-only receipts log: RFC 9162 Merkle tree, C2SP signed checkpoints, tiles and cosignatures.',
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
  errorShape: 'api',
  securitySchemes: {
    writer: { type: 'http', scheme: 'bearer', description: 'a writer token from LEDGER_WRITERS' },
  },
  readConfig: readLedgerConfig,
  async build(app, ctx) {
    const db = ctx.database!.db as Kysely<LedgerTables>
    const keys = logKeys(ctx.config, ctx.common.dataDir)
    await publishEmptyCheckpoint(db, ctx.config.origin, keys.signer)
    const jobs = await Jobs.start(ctx.database!, {
      onError: (err) => ctx.log.warn({ err: err.message }, 'jobs error'),
    })
    const witnesses = witnessSet(ctx.config)
    const pusher = new WitnessPusher(db, witnesses, ctx.log)
    const sequencer = new Sequencer(db, {
      onBatch: (trx, from, to) => enqueueDeliveries(jobs, trx, from, to),
      onPublished: () => pusher.poke(),
      origin: ctx.config.origin,
      signer: keys.signer,
      batchMax: ctx.config.batchMax,
      batchWaitMs: ctx.config.batchWaitMs,
      log: ctx.log,
    })
    // appends already accepted are integrated and answered before the database closes
    app.addHook('preClose', async () => {
      await sequencer.drain()
      pusher.close()
      await jobs.stop()
    })
    logRoutes(app, ctx.config, sequencer)
    readRoutes(app, db, keys.verifierKey)
    keyRoutes(app, ctx.config.origin, keys.verifierKey)
    searchRoutes(app, db, ctx.config)
    witnessRoutes(app, db, witnesses.keys)
    // a checkpoint published while the witnesses were away is shown to them now
    app.addHook('onReady', async () => pusher.poke())
    await webhookRoutes(app, db, ctx.config, jobs, keys.webhookKey)
  },
}
