import type { CommonConfig } from '@svc/kit'

export type AgentsConfig = Record<string, never>

export function readAgentsConfig(_env: NodeJS.ProcessEnv, _common: CommonConfig): AgentsConfig {
  return {}
}
