import { type CommonConfig, ConfigError, devFileSecret, devIdpAdminToken, readEnv } from '@svc/kit'
import { b64uDecode } from '@svc/trust/base64url'
import { verifierFromKey } from '@svc/trust/note'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { Type } from 'typebox'
import { Value } from 'typebox/value'

export interface IdpConfig {
  adminToken: string
  /** True when the admin token was generated for this run (development): printed at start. */
  adminTokenGenerated: boolean
  /** The AES-256 key that seals signing keys and webhook secrets at rest. */
  encryptionKey: Uint8Array
  /** Days a signing key signs before a new one takes over. */
  keyRotationDays: number
  /** Hours a retired key stays in the JWKS, for tokens it signed. */
  keyRetentionHours: number
  /** The clock of grants that wait on the user (device codes); tests start the service with their own. */
  now: () => Date
  /** The salt of pairwise subjects: never rotated, or every pairwise `sub` would change. */
  pairwiseSalt: string
  /** The development demo account's password (kept in the data directory; no demo account in production). */
  demoPassword: string
  /** Discovery and JWKS requests per minute per IP (identity-provider.md, Limits); 0 turns it off. */
  discoveryRatePerMinute: number
  /** Agent registry requests per minute per IP (identity-provider.md, Limits); 0 turns it off. */
  registryRatePerMinute: number
  /** Registrations and reset requests per minute per IP; 0 turns it off. */
  registerRatePerMinute: number
  /** /token requests per minute per client and per IP (identity-provider.md, Limits); 0 turns one off. */
  tokenRatePerMinute: { client: number; ip: number }
  /** User codes an account may look up per minute at /device (RFC 8628 §5.1); 0 turns it off. */
  userCodeRatePerMinute: number
  /** The idp's writer token at the ledger (LEDGER_WRITERS there); the development default matches the ledger's. */
  ledgerToken: string
  /** The mail server (smtp:// or smtps://); unset in development means the outbox page. */
  smtpUrl: string | undefined
  /** The From of the idp's email; by default no-reply at the issuer's host. */
  mailFrom: string | undefined
  /** Seconds a client waits between polls of an approval (`slow_down` when faster). */
  approvalIntervalS: number
  /** Seconds a device client waits between polls of its code (RFC 8628 `interval`; `slow_down` when faster). */
  deviceIntervalS: number
  /** Base delay of lifecycle webhook retries (doubling, 8 attempts: 20 s spreads them over about an hour). */
  lifecycleRetryDelayS: number
  /**
   * Lets URLs given by callers (JWKS, owner documents, lifecycle, SSF and logout endpoints) be http
   * and private (never a cloud metadata address): on by default in development and tests only.
   */
  fetchAllowPrivate: boolean
  /** Where a domain publishes its owner document; `{domain}` is replaced. */
  ownerDocumentUrl: string
  /** What /.well-known/svc-sovereignty.json declares about where and under which law the idp runs. */
  sovereignty: Sovereignty
  /** What the build says of itself (SVC_BUILD_COMMIT, SVC_BUILD_TIME); unset, the checkout and the start are used. */
  build: { commit?: string; time?: string }
  /** The logs the idp witnesses: their signed-note verifier keys (the key name is the log's origin). */
  witnessLogs: string[]
  /** Development only: a log not configured is trusted with the key the ledger shows at first contact. */
  witnessPinOnFirstUse: boolean
}

export interface Sovereignty {
  hosting_region: string
  jurisdiction: string
  sub_processors: Array<{ name: string; purpose: string; region: string }>
  last_residency_claim: { region: string; checked_at: string } | null
  transfer_verdict: string
}

const DEVELOPMENT_SOVEREIGNTY: Sovereignty = {
  hosting_region: 'local development machine',
  jurisdiction: 'none declared (development)',
  sub_processors: [],
  last_residency_claim: null,
  transfer_verdict: 'no transfers: development data stays on this machine',
}

const SovereigntySchema = Type.Object(
  {
    hosting_region: Type.String({ minLength: 1, maxLength: 200 }),
    jurisdiction: Type.String({ minLength: 1, maxLength: 200 }),
    sub_processors: Type.Array(
      Type.Object({
        name: Type.String({ minLength: 1, maxLength: 200 }),
        purpose: Type.String({ minLength: 1, maxLength: 300 }),
        region: Type.String({ minLength: 1, maxLength: 200 }),
      }),
      { maxItems: 100 },
    ),
    last_residency_claim: Type.Union([
      Type.Object({
        region: Type.String({ minLength: 1 }),
        checked_at: Type.String({ format: 'date-time' }),
      }),
      Type.Null(),
    ]),
    transfer_verdict: Type.String({ minLength: 1, maxLength: 500 }),
  },
  { additionalProperties: false },
)

function readSovereignty(text: string | undefined, production: boolean): Sovereignty {
  if (text === undefined) {
    if (production) throw new ConfigError('IDP_SOVEREIGNTY must be set when NODE_ENV=production')
    return DEVELOPMENT_SOVEREIGNTY
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ConfigError('IDP_SOVEREIGNTY must be a JSON object')
  }
  if (!Value.Check(SovereigntySchema, value))
    throw new ConfigError(
      `IDP_SOVEREIGNTY ${[...Value.Errors(SovereigntySchema, value)][0]?.message ?? 'is invalid'}: {hosting_region, jurisdiction, sub_processors, last_residency_claim, transfer_verdict}`,
    )
  return value as Sovereignty
}

function witnessLogs(list: string | undefined): string[] {
  const keys = list?.split(',').map((k) => k.trim()) ?? []
  for (const key of keys)
    try {
      verifierFromKey(key)
    } catch (err) {
      throw new ConfigError(
        `IDP_WITNESS_LOGS: ${JSON.stringify(key)} is not a signed-note verifier key (${(err as Error).message})`,
      )
    }
  return keys
}

/** The ledger's development writer for the idp (services/ledger DEV_WRITERS). */
const DEV_LEDGER_TOKEN = 'dev-ledger-writer-idp'

export function readIdpConfig(env: NodeJS.ProcessEnv, common: CommonConfig): IdpConfig {
  const values = readEnv(
    {
      IDP_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
      IDP_ENCRYPTION_KEY: Type.Optional(
        Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: '32 bytes, base64url' }),
      ),
      IDP_KEY_ROTATION_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
      IDP_KEY_RETENTION_HOURS: Type.Optional(Type.Integer({ minimum: 1, maximum: 8760 })),
      IDP_PAIRWISE_SALT: Type.Optional(Type.String({ minLength: 32 })),
      IDP_DISCOVERY_RATE_PER_MIN: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
      IDP_REGISTER_RATE_PER_MIN: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
      IDP_REGISTRY_RATE_PER_MIN: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
      IDP_TOKEN_RATE_PER_MIN_CLIENT: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
      IDP_TOKEN_RATE_PER_MIN_IP: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
      IDP_USER_CODE_RATE_PER_MIN: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
      IDP_LEDGER_TOKEN: Type.Optional(Type.String({ minLength: 16, maxLength: 200 })),
      IDP_SMTP_URL: Type.Optional(
        Type.String({ pattern: '^smtps?://[^\\s]+$', description: 'smtp:// or smtps://' }),
      ),
      IDP_MAIL_FROM: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
      IDP_APPROVAL_INTERVAL_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
      IDP_DEVICE_INTERVAL_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
      IDP_LIFECYCLE_RETRY_DELAY_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
      IDP_FETCH_ALLOW_PRIVATE: Type.Optional(Type.Boolean()),
      IDP_SOVEREIGNTY: Type.Optional(Type.String({ minLength: 2, maxLength: 20_000 })),
      SVC_BUILD_COMMIT: Type.Optional(Type.String({ pattern: '^[0-9a-f]{7,64}$' })),
      SVC_BUILD_TIME: Type.Optional(Type.String({ format: 'date-time' })),
      IDP_WITNESS_LOGS: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000 })),
      IDP_OWNER_DOCUMENT_URL: Type.Optional(
        Type.String({ pattern: '^https?://[^\\s]*\\{domain\\}[^\\s]*$' }),
      ),
    },
    env,
  )
  if (common.nodeEnv === 'production' && values.IDP_FETCH_ALLOW_PRIVATE)
    throw new ConfigError('IDP_FETCH_ALLOW_PRIVATE is for tests and development, never production')
  if (common.nodeEnv === 'production' && !values.IDP_ADMIN_TOKEN)
    throw new ConfigError('IDP_ADMIN_TOKEN must be set when NODE_ENV=production')
  if (common.nodeEnv === 'production' && !values.IDP_ENCRYPTION_KEY)
    throw new ConfigError('IDP_ENCRYPTION_KEY must be set when NODE_ENV=production')
  if (common.nodeEnv === 'production' && !values.IDP_PAIRWISE_SALT)
    throw new ConfigError('IDP_PAIRWISE_SALT must be set when NODE_ENV=production')
  if (common.nodeEnv === 'production' && !values.IDP_LEDGER_TOKEN)
    throw new ConfigError('IDP_LEDGER_TOKEN must be set when NODE_ENV=production')
  if (common.nodeEnv === 'production' && !values.IDP_SMTP_URL)
    throw new ConfigError(
      'IDP_SMTP_URL must be set when NODE_ENV=production (the outbox page is for development)',
    )
  const encryptionKey =
    values.IDP_ENCRYPTION_KEY ??
    devFileSecret(join(common.dataDir), 'idp.encryption-key', () => randomBytes(32).toString('base64url'))
  return {
    // development: one token kept in the data directory, which the rental reads to register its console
    adminToken: values.IDP_ADMIN_TOKEN ?? devIdpAdminToken(common.dataDir),
    adminTokenGenerated: !values.IDP_ADMIN_TOKEN,
    encryptionKey: b64uDecode(encryptionKey),
    keyRotationDays: values.IDP_KEY_ROTATION_DAYS ?? 90,
    keyRetentionHours: values.IDP_KEY_RETENTION_HOURS ?? 24,
    now: () => new Date(),
    discoveryRatePerMinute: values.IDP_DISCOVERY_RATE_PER_MIN ?? 240,
    registerRatePerMinute: values.IDP_REGISTER_RATE_PER_MIN ?? 5,
    registryRatePerMinute: values.IDP_REGISTRY_RATE_PER_MIN ?? 30,
    tokenRatePerMinute: {
      client: values.IDP_TOKEN_RATE_PER_MIN_CLIENT ?? 30,
      ip: values.IDP_TOKEN_RATE_PER_MIN_IP ?? 60,
    },
    userCodeRatePerMinute: values.IDP_USER_CODE_RATE_PER_MIN ?? 10,
    ledgerToken: values.IDP_LEDGER_TOKEN ?? DEV_LEDGER_TOKEN,
    smtpUrl: values.IDP_SMTP_URL,
    mailFrom: values.IDP_MAIL_FROM,
    approvalIntervalS: values.IDP_APPROVAL_INTERVAL_S ?? 5,
    deviceIntervalS: values.IDP_DEVICE_INTERVAL_S ?? 5,
    lifecycleRetryDelayS: values.IDP_LIFECYCLE_RETRY_DELAY_S ?? 20,
    fetchAllowPrivate:
      values.IDP_FETCH_ALLOW_PRIVATE ?? (common.nodeEnv === 'development' || common.nodeEnv === 'test'),
    ownerDocumentUrl: values.IDP_OWNER_DOCUMENT_URL ?? 'https://{domain}/.well-known/svc-owner.json',
    sovereignty: readSovereignty(values.IDP_SOVEREIGNTY, common.nodeEnv === 'production'),
    build: {
      ...(values.SVC_BUILD_COMMIT ? { commit: values.SVC_BUILD_COMMIT } : {}),
      ...(values.SVC_BUILD_TIME ? { time: values.SVC_BUILD_TIME } : {}),
    },
    witnessLogs: witnessLogs(values.IDP_WITNESS_LOGS),
    witnessPinOnFirstUse: common.nodeEnv === 'development' && !values.IDP_WITNESS_LOGS,
    pairwiseSalt:
      values.IDP_PAIRWISE_SALT ??
      devFileSecret(common.dataDir, 'idp.pairwise-salt', () => randomBytes(32).toString('base64url')),
    demoPassword:
      common.nodeEnv === 'production'
        ? ''
        : devFileSecret(common.dataDir, 'idp.demo-password', () => randomBytes(9).toString('base64url')),
  }
}
