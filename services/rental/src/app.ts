import { fileURLToPath } from 'node:url'
import type { ServiceSpec } from '@svc/kit'
import { type RentalConfig, readRentalConfig } from './config.ts'

export const rental: ServiceSpec<RentalConfig> = {
  name: 'rental',
  // the version the rental API description carries (rental-service.md, Versioning)
  version: '0.16.1',
  description: 'The agent rental service: hire agents for jobs, sign SLAs and escrows, run tasks, pay once.',
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
  errorShape: 'api',
  readConfig: readRentalConfig,
  async build() {},
}
