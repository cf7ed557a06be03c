import { randomBytes } from 'node:crypto'
import { type Static, type TObject, type TProperties, type TSchema, Type } from 'typebox'
import { Value } from 'typebox/value'
import { ConfigError } from './errors.ts'

export const NodeEnv = Type.Union([
  Type.Literal('development'),
  Type.Literal('test'),
  Type.Literal('production'),
])
export const LogLevel = Type.Union(
  ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
)
export const Port = Type.Integer({ minimum: 0, maximum: 65535 })
export const HttpUrl = Type.String({ pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$' })

/** Variables every service reads. */
export const commonEnv = {
  NODE_ENV: Type.Optional(NodeEnv),
  LOG_LEVEL: Type.Optional(LogLevel),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_SCHEMA: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,40}$' })),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
  DATABASE_CONNECT_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
  DATABASE_PREPARED_STATEMENTS: Type.Optional(Type.Boolean()),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  REDIS_COMMAND_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 50, maximum: 60_000 })),
  JOBS_MAINTENANCE_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  SHUTDOWN_DELAY_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
  SHUTDOWN_GRACE_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
}

/** What a variable must look like, in words: the allowed values of a union of literals, or the first rule broken. */
function expectation(schema: TSchema, value: unknown): string {
  const options = (schema as { anyOf?: Array<{ const?: unknown }> }).anyOf
  if (options?.every((o) => o.const !== undefined))
    return `must be one of ${options.map((o) => o.const).join(', ')}`
  return [...Value.Errors(schema, value)][0]?.message ?? 'is invalid'
}

/**
 * Reads the environment against a schema: strings are converted to the declared types, and
 * every wrong variable is reported at once, by name, with its value and what was expected.
 */
export function readEnv<P extends TProperties>(
  properties: P,
  env: NodeJS.ProcessEnv = process.env,
): Static<TObject<P>> {
  const result: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [key, schema] of Object.entries(properties)) {
    const raw = env[key]
    if (raw === undefined || raw === '') continue
    const value = Value.Convert(schema, raw)
    if (Value.Check(schema, value)) result[key] = value
    else problems.push(`  ${key}=${JSON.stringify(raw)}: ${expectation(schema, value)}`)
  }
  if (problems.length) throw new ConfigError(`invalid configuration:\n${problems.join('\n')}`)
  return result as Static<TObject<P>>
}

/**
 * A development default for a secret. In production a missing secret is refused:
 * a generated key or token must never silently protect a real deployment.
 */
export function devSecret(name: string, given: string | undefined, nodeEnv: string | undefined): string {
  if (given) return given
  if (nodeEnv === 'production') throw new ConfigError(`${name} must be set when NODE_ENV=production`)
  return randomBytes(24).toString('base64url')
}
