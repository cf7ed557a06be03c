import type { Kysely, Transaction } from 'kysely'
import type { LogTables } from './areas/log/store.ts'
import type { WebhookTables } from './areas/webhooks/store.ts'
import type { WitnessTables } from './areas/witness/store.ts'

/** The ledger's tables, as Kysely sees them: each area declares its own in its store.ts. */
export type LedgerTables = LogTables & WitnessTables & WebhookTables

export type LedgerDb = Kysely<LedgerTables> | Transaction<LedgerTables>
