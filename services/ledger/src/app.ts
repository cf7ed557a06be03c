import { fileURLToPath } from 'node:url'
import type { ServiceSpec } from '@svc/kit'
import { type LedgerConfig, readLedgerConfig } from './config.ts'

export const ledger: ServiceSpec<LedgerConfig> = {
  name: 'ledger',
  version: '0.1.0',
  description: 'The append-only receipts log, with Merkle proofs and signed, co-signed checkpoints.',
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
  errorShape: 'api',
  readConfig: readLedgerConfig,
  async build() {},
}
