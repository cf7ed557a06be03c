import { randomBytes } from 'node:crypto'
import { type CommonConfig, ConfigError, devFileSecret, readEnv } from '@svc/kit'
import { Type } from 'typebox'
import type { FileRules } from './areas/agents/files.ts'

export interface AgentsConfig {
  /** The secret every agent's Ed25519 key is derived from (HKDF, info = the agent's id): 32+ bytes. */
  keySeed: Uint8Array
  /** Tasks each agent keeps in memory; the oldest are forgotten past it. */
  maxTasks: number
  /** File parts given by URL (a rental's task files): how large, and from which origins. */
  files: FileRules
  /** A test knob: each skill waits this long before completing (a slowed agent; 0 = none). */
  delayMs: number
  /** How long the note-taker waits for a held tool call's outcome (polling the rental), in ms; 0: it does not wait. */
  toolWaitMs: number
}

export function readAgentsConfig(env: NodeJS.ProcessEnv, common: CommonConfig): AgentsConfig {
  const values = readEnv(
    {
      AGENTS_KEY_SEED: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{43,}$' })),
      AGENTS_MAX_TASKS: Type.Optional(Type.Integer({ minimum: 10, maximum: 1_000_000 })),
      AGENTS_FILE_MAX_BYTES: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 * 1024 * 1024 })),
      AGENTS_FILE_ORIGINS: Type.Optional(Type.String({ maxLength: 10_000 })),
      AGENTS_DELAY_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 120_000 })),
      AGENTS_TOOL_WAIT_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
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
  if (common.nodeEnv === 'production' && (values.AGENTS_DELAY_MS ?? 0) > 0)
    throw new ConfigError('AGENTS_DELAY_MS slows every agent: not allowed when NODE_ENV=production')
  return {
    keySeed,
    maxTasks: values.AGENTS_MAX_TASKS ?? 1000,
    delayMs: values.AGENTS_DELAY_MS ?? 0,
    toolWaitMs: values.AGENTS_TOOL_WAIT_MS ?? 20_000,
    files: {
      maxBytes: values.AGENTS_FILE_MAX_BYTES ?? 1024 * 1024,
      origins: originsOf(values.AGENTS_FILE_ORIGINS, common.nodeEnv === 'production'),
    },
  }
}

/**
 * AGENTS_FILE_ORIGINS: comma-separated origins (https://rental.example) file URLs may point at;
 * unset, any in development and tests and none in production (file parts then fail the task).
 */
function originsOf(value: string | undefined, production: boolean): string[] | null {
  if (value === undefined) return production ? [] : null
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      let url: URL
      try {
        url = new URL(entry)
      } catch {
        throw new ConfigError(`AGENTS_FILE_ORIGINS: ${JSON.stringify(entry.slice(0, 60))} is not an origin`)
      }
      if (url.origin !== entry.replace(/\/$/, '') || (url.protocol !== 'https:' && url.protocol !== 'http:'))
        throw new ConfigError(
          `AGENTS_FILE_ORIGINS: ${JSON.stringify(entry.slice(0, 60))} is not an http(s) origin`,
        )
      return url.origin
    })
}
