import type { CommonConfig } from '@svc/kit'

export type LedgerConfig = Record<string, never>

export function readLedgerConfig(_env: NodeJS.ProcessEnv, _common: CommonConfig): LedgerConfig {
  return {}
}
