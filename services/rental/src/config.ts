import { randomBytes } from 'node:crypto'
import { type CommonConfig, ConfigError, devFileSecret, devIdpAdminToken, readEnv } from '@svc/kit'
import { Type } from 'typebox'

export interface RentalConfig {
  /**
   * How the console gets its client at the idp: registered through the management API with the
   * admin token, or given outright (RENTAL_CLIENT_ID and RENTAL_CLIENT_SECRET).
   */
  idpClient: { adminToken: string } | { clientId: string; clientSecret: string }
  /** The AES-256 key that seals the client secret and derives the CSRF key. */
  encryptionKey: Buffer
  /** Hours a console session lasts from sign-in (it ends sooner on logout or back-channel logout). */
  sessionTtlHours: number
  /** Seeds the demo catalogue (jobs of the built-in agents): on outside production by default. */
  seed: boolean
  /** API tokens one client may hold at once. */
  maxApiTokens: number
  /** The rental's writer token at the ledger (LEDGER_WRITERS there); the development default matches the ledger's. */
  ledgerToken: string
  /** Fils granted once to a client's wallet at first sight (development and tests); 0 in production. */
  demoWalletFils: number
  /** The platform fee taken at release, in basis points of the escrow (1000 = 10 %). */
  feeBps: number
  /** How long a sync task waits for the agent before it carries on asynchronously. */
  taskTimeoutMs: number
  /** Seconds a task's output is kept after completion. */
  outputTtlS: number
  /** Attempts after the first for an async task run (pg-boss retries with backoff). */
  taskRetries: number
  /**
   * The platform's operators: idp subjects or emails (an email counts when the idp verified it).
   * In development the demo user is one.
   */
  operators: string[]
}

const DEMO_EMAIL = 'demo@svc.local'

/** The ledger's development writer for the rental (services/ledger DEV_WRITERS). */
const DEV_LEDGER_TOKEN = 'dev-ledger-writer-rental'

export function readRentalConfig(env: NodeJS.ProcessEnv, common: CommonConfig): RentalConfig {
  const values = readEnv(
    {
      RENTAL_IDP_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16, maxLength: 500 })),
      RENTAL_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      RENTAL_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 16, maxLength: 500 })),
      RENTAL_ENCRYPTION_KEY: Type.Optional(
        Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: '32 bytes, base64url' }),
      ),
      RENTAL_SESSION_TTL_HOURS: Type.Optional(Type.Integer({ minimum: 1, maximum: 720 })),
      RENTAL_SEED: Type.Optional(Type.Boolean()),
      RENTAL_MAX_API_TOKENS: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
      RENTAL_LEDGER_TOKEN: Type.Optional(Type.String({ pattern: '^[\\x21-\\x7e]{16,200}$' })),
      RENTAL_DEMO_WALLET_FILS: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 })),
      RENTAL_FEE_BPS: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
      RENTAL_TASK_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
      RENTAL_OUTPUT_TTL_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 31_536_000 })),
      RENTAL_TASK_RETRIES: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
      RENTAL_OPERATORS: Type.Optional(Type.String({ maxLength: 10_000 })),
    },
    env,
  )
  const production = common.nodeEnv === 'production'
  if (Boolean(values.RENTAL_CLIENT_ID) !== Boolean(values.RENTAL_CLIENT_SECRET))
    throw new ConfigError('RENTAL_CLIENT_ID and RENTAL_CLIENT_SECRET are given together or not at all')
  if (production && !values.RENTAL_CLIENT_ID && !values.RENTAL_IDP_ADMIN_TOKEN)
    throw new ConfigError(
      'RENTAL_IDP_ADMIN_TOKEN (or RENTAL_CLIENT_ID and RENTAL_CLIENT_SECRET) must be set when NODE_ENV=production',
    )
  if (production && !values.RENTAL_LEDGER_TOKEN)
    throw new ConfigError('RENTAL_LEDGER_TOKEN must be set when NODE_ENV=production')
  if (production && values.RENTAL_DEMO_WALLET_FILS)
    throw new ConfigError('RENTAL_DEMO_WALLET_FILS grants demo money: refused when NODE_ENV=production')
  if (production && !values.RENTAL_ENCRYPTION_KEY)
    throw new ConfigError('RENTAL_ENCRYPTION_KEY must be set when NODE_ENV=production')
  const encryptionKey =
    values.RENTAL_ENCRYPTION_KEY ??
    devFileSecret(common.dataDir, 'rental.encryption-key', () => randomBytes(32).toString('base64url'))
  return {
    idpClient:
      values.RENTAL_CLIENT_ID && values.RENTAL_CLIENT_SECRET
        ? { clientId: values.RENTAL_CLIENT_ID, clientSecret: values.RENTAL_CLIENT_SECRET }
        : // development: the token the idp keeps in the same data directory
          { adminToken: values.RENTAL_IDP_ADMIN_TOKEN ?? devIdpAdminToken(common.dataDir) },
    encryptionKey: Buffer.from(encryptionKey, 'base64url'),
    sessionTtlHours: values.RENTAL_SESSION_TTL_HOURS ?? 12,
    seed: values.RENTAL_SEED ?? !production,
    maxApiTokens: values.RENTAL_MAX_API_TOKENS ?? 50,
    ledgerToken: values.RENTAL_LEDGER_TOKEN ?? DEV_LEDGER_TOKEN,
    // production has no grant: wallets are funded by a real payment provider (not built yet)
    demoWalletFils: production ? 0 : (values.RENTAL_DEMO_WALLET_FILS ?? 1_000_000),
    feeBps: values.RENTAL_FEE_BPS ?? 1000,
    taskTimeoutMs: values.RENTAL_TASK_TIMEOUT_MS ?? 30_000,
    outputTtlS: values.RENTAL_OUTPUT_TTL_S ?? 3600,
    taskRetries: values.RENTAL_TASK_RETRIES ?? 4,
    operators: operatorsOf(values.RENTAL_OPERATORS, production),
  }
}

/** RENTAL_OPERATORS: comma-separated idp subjects or emails; unset: none in production, the demo user otherwise. */
function operatorsOf(value: string | undefined, production: boolean): string[] {
  if (value === undefined) return production ? [] : [DEMO_EMAIL]
  const operators = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  for (const entry of operators)
    if (entry.length > 320 || !/^[\x21-\x7e]+$/.test(entry))
      throw new ConfigError(
        `RENTAL_OPERATORS: ${JSON.stringify(entry.slice(0, 40))} is not a subject or an email`,
      )
  return operators
}
