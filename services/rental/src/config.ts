import type { CommonConfig } from '@svc/kit'

export type RentalConfig = Record<string, never>

export function readRentalConfig(_env: NodeJS.ProcessEnv, _common: CommonConfig): RentalConfig {
  return {}
}
