import { fileURLToPath } from 'node:url'
import { Jobs, type ServiceSpec } from '@svc/kit'
import type { Kysely } from 'kysely'
import { keyArea } from './areas/key/index.ts'
import { logArea } from './areas/log/index.ts'
import { readArea } from './areas/read/index.ts'
import { searchArea } from './areas/search/index.ts'
import { webhooksArea } from './areas/webhooks/index.ts'
import { witnessArea } from './areas/witness/index.ts'
import { type LedgerConfig, readLedgerConfig } from './config.ts'
import { mountAreas } from './context.ts'
import type { LedgerTables } from './db.ts'
import { ledgerErrors } from './errors.ts'
import { logKeys } from './keys.ts'

export const ledger: ServiceSpec<LedgerConfig> = {
  name: 'ledger',
  version: '0.1.0',
  description:
    'The append-only receipts log: RFC 9162 Merkle tree, C2SP signed checkpoints, tiles and cosignatures.',
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
  errorShape: 'api',
  errorCodes: ledgerErrors.codes,
  securitySchemes: {
    writer: { type: 'http', scheme: 'bearer', description: 'a writer token from LEDGER_WRITERS' },
  },
  readConfig: readLedgerConfig,
  home: (ctx) => [
    { rel: 'checkpoint', title: 'The latest signed checkpoint', href: '/checkpoint' },
    { rel: 'key', title: 'The log’s public key', href: '/v1/key' },
    {
      rel: 'console',
      title: 'The rental’s console (receipts verified in the browser)',
      href: `${ctx.topology.rental.url}/console`,
    },
  ],
  async build(app, service) {
    const jobs = await Jobs.start(service.database!, {
      maintenanceIntervalSeconds: service.common.jobsMaintenanceS,
      onError: (err) => service.log.warn({ err: err.message }, 'jobs error'),
      metrics: app.metrics,
    })
    const ctx = {
      db: service.database!.db as Kysely<LedgerTables>,
      jobs,
      config: service.config,
      keys: logKeys(service.config, service.common.dataDir),
      log: service.log,
    }
    // routes in this order (the API document's); services in the order areas need them
    await mountAreas(app, ctx, [logArea, readArea, keyArea, searchArea, witnessArea, webhooksArea])
    // after the log's drain (its preClose comes first): a draining batch still enqueues deliveries
    app.addHook('preClose', async () => jobs.stop())
  },
}
