import { areaKit, type Jobs } from '@svc/kit'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { LogService } from './areas/log/index.ts'
import type { WebhookService } from './areas/webhooks/index.ts'
import type { WitnessService } from './areas/witness/index.ts'
import type { LedgerConfig } from './config.ts'
import type { LedgerTables } from './db.ts'
import type { LogKeys } from './keys.ts'

/** What every area of the ledger is given, made once in app.ts. */
export interface LedgerContext {
  db: Kysely<LedgerTables>
  jobs: Jobs
  config: LedgerConfig
  /** The log's signer, its verifier key and the key webhook secrets derive from. */
  keys: LogKeys
  log: Logger
}

/** Each area's service: the only thing other areas may call. */
export interface LedgerServices {
  log: LogService
  read: undefined
  key: undefined
  search: undefined
  witness: WitnessService
  webhooks: WebhookService
}

export const { defineArea, mountAreas } = areaKit<LedgerContext, LedgerServices>()
