import { randomBytes } from 'node:crypto'
import { type CommonConfig, ConfigError, devFileSecret, readEnv } from '@svc/kit'
import { Type } from 'typebox'

export interface AgentsConfig {
  /** The secret every agent's Ed25519 key is derived from (HKDF, info = the agent's id): 32+ bytes. */
  keySeed: Uint8Array
  /** Tasks each agent keeps in memory; the oldest are forgotten past it. */
  maxTasks: number
}

export function readAgentsConfig(env: NodeJS.ProcessEnv, common: CommonConfig): AgentsConfig {
  const values = readEnv(
    {
      AGENTS_KEY_SEED: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{43,}$' })),
      AGENTS_MAX_TASKS: Type.Optional(Type.Integer({ minimum: 10, maximum: 1_000_000 })),
    },
    env,
  )
  if (common.nodeEnv === 'production' && !values.AGENTS_KEY_SEED)
    throw new ConfigError('AGENTS_KEY_SEED must be set when NODE_ENV=production')
  // development: made once and kept in DATA_DIR, so the agents' DIDs survive restarts
  const seed =
    values.AGENTS_KEY_SEED ??
    devFileSecret(common.dataDir, 'agents.key-seed', () => randomBytes(32).toString('base64url'))
  const keySeed = new Uint8Array(Buffer.from(seed, 'base64url'))
  if (keySeed.length < 32 || Buffer.from(keySeed).toString('base64url') !== seed.replace(/=+$/, ''))
    throw new ConfigError('AGENTS_KEY_SEED must be base64url of at least 32 bytes')
  return { keySeed, maxTasks: values.AGENTS_MAX_TASKS ?? 1000 }
}
