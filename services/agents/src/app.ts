import type { ServiceSpec } from '@svc/kit'
import { type AgentsConfig, readAgentsConfig } from './config.ts'

/** The built-in demo agents. They keep no data, so they get no database (PGlite costs ~250 MB). */
export const agents: ServiceSpec<AgentsConfig> = {
  name: 'agents',
  version: '0.1.0',
  description: 'The built-in demo agents: A2A servers that do real offline work.',
  errorShape: 'api',
  readConfig: readAgentsConfig,
  async build() {},
}
