import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import {
  type CommonConfig,
  ConfigError,
  DEV_IDP_ADMIN_TOKEN_FILE,
  devFileSecret,
  devIdpAdminToken,
  readEnv,
} from '@svc/kit'
import { Type } from 'typebox'

/** The console registers its client with the idp's admin token; `from` says where the token came from. */
export interface AdminTokenClient {
  adminToken: string
  from: string
}

export interface RentalConfig {
  /**
   * How the console gets its client at the idp: registered through the management API with the
   * admin token, or given outright (RENTAL_CLIENT_ID and RENTAL_CLIENT_SECRET).
   */
  idpClient: AdminTokenClient | { clientId: string; clientSecret: string; webhookSecret?: string | undefined }
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
  /** Who issues invoices (the platform): name, address, tax registration number (TRN), days to pay. */
  invoiceIssuer: { name: string; address: string; trn: string }
  /** The platform fee taken at release, in basis points of the escrow (1000 = 10 %). */
  feeBps: number
  /** How long a sync task waits for the agent before it carries on asynchronously. */
  taskTimeoutMs: number
  /** How long a task's event stream stays open before it ends (the client reconnects), in seconds. */
  eventsStreamS: number
  /** Seconds a task's output is kept after completion. */
  outputTtlS: number
  /** A trace viewer's URL with `{trace_id}` (RENTAL_TRACE_URL_TEMPLATE): a task's page links its trace there. */
  traceUrlTemplate: string | undefined
  /** Attempts after the first for a task's run (areas/tasks/attempts.ts). */
  taskRetries: number
  /** The retries' backoff: exponential from `baseMs`, capped at `capMs`, with full jitter. */
  taskRetryBackoff: { baseMs: number; capMs: number }
  /** Seconds between an instance's heartbeats and sweeps of task leases; silent for 3 of them, an instance is gone. */
  taskSweepS: number
  /**
   * The platform's operators: idp subjects or emails (an email counts when the idp verified it).
   * In development the demo user is one.
   */
  operators: string[]
  /** Tool servers (areas/connect): public https only outside development and tests; a call's deadline, its arguments' size, the task credential's life. */
  connect: { allowPrivate: boolean; timeoutMs: number; maxArgumentBytes: number; tokenTtlS: number }
  /** External agents' cards: fetched from public https URLs only outside development and tests; refetched past the TTL. */
  market: { allowPrivate: boolean; cardTtlS: number }
  /** Outbound webhooks: who may be called, how long an attempt lasts, when failures are retried. */
  webhooks: {
    /** Private, loopback and link-local addresses (and plain http) allowed: development and tests only. */
    allowPrivate: boolean
    /** Seconds before each retry after a failed attempt; past the last, the delivery failed. */
    retryDelaysS: number[]
    /** Milliseconds one attempt may take. */
    timeoutMs: number
    /** Live webhooks one organization may have. */
    max: number
  }
  /** How often each instance looks for schedules whose next tick is due (RENTAL_SCHEDULE_CHECK_MS). */
  scheduleCheckMs: number
  /** The data room: the most one file and one organization's files may take, and the retired service keys. */
  files: {
    /** Bytes one file may hold (RENTAL_FILE_MAX_BYTES). */
    maxBytes: number
    /** Bytes all of one organization's stored files may hold together (RENTAL_ORG_FILES_MAX_BYTES). */
    orgMaxBytes: number
    /** Earlier RENTAL_ENCRYPTION_KEYs (RENTAL_ENCRYPTION_KEYS_RETIRED): they open files' data keys sealed before a rotation. */
    retiredKeys: Buffer[]
  }
  /** Seconds after a rating is made during which its organization may edit it (RENTAL_RATING_EDIT_WINDOW_S). */
  ratingEditWindowS: number
  /** Seconds between two runs of the retention job (RENTAL_RETENTION_SWEEP_S). */
  retentionSweepS: number
  /** Seconds between two publications of the audit chains' heads to the ledger (RENTAL_AUDIT_ANCHOR_S). */
  auditAnchorS: number
  /**
   * Step-up (GET /api/auth/step-up): sensitive routes ask for a second factor (`acr`
   * urn:svc:mfa) proven within `maxAgeS`. On by default in production only (RENTAL_STEP_UP).
   */
  stepUp: {
    enabled: boolean
    /** Seconds an MFA sign-in counts for sensitive routes (RENTAL_STEP_UP_MAX_AGE_S). */
    maxAgeS: number
    /** Releases of more than this many fils need step-up (RENTAL_STEP_UP_RELEASE_FILS). */
    releaseFils: number
  }
  /**
   * Onboarding: whether an approved business check (KYB) is needed to publish a listing or to hire
   * above `hireLimitFils` (RENTAL_KYB_REQUIRED: on in production, off elsewhere), and the rental's
   * own organization key at the idp (RENTAL_IDP_ORG_KEY; unset outside production: one is signed up).
   */
  onboarding: {
    kybRequired: boolean
    hireLimitFils: number
    idpOrgKey: string | undefined
    /** Without a key, one is signed up at the idp (never in production). */
    mayEnrol: boolean
  }
  /** Seconds a task's file URL (the A2A file part handed to its agent) stays valid (RENTAL_FILE_URL_TTL_S). */
  fileUrlTtlS: number
  /** The SLA: the latency target the built-in jobs offer at hire, and how often each instance posts the closed periods' credits. */
  sla: {
    /** p95 latency target put into each new SLA body (RENTAL_SLA_LATENCY_P95_MS). */
    latencyP95Ms: number
    /** Milliseconds between two looks for breaches of closed periods to credit (RENTAL_SLA_CREDIT_CHECK_MS). */
    creditCheckMs: number
  }
  /**
   * The rental's clock (every area's `ctx.now()`), for tests that start the service with their own
   * (as the idp's tests do); never read from the environment. Unset: the system clock.
   */
  now?: () => Date
}

/** Standard Webhooks' schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h (then the delivery failed). */
const WEBHOOK_RETRY_DELAYS_S = [5, 300, 1800, 7200, 18000, 36000]

const DEMO_EMAIL = 'demo@svc.local'

/** The ledger's development writer for the rental (services/ledger DEV_WRITERS). */
const DEV_LEDGER_TOKEN = 'dev-ledger-writer-rental'

/** The rental's own variable, else the idp's, else (development) the token the idp keeps in the same data directory. */
function adminTokenClient(
  values: { RENTAL_IDP_ADMIN_TOKEN?: string; IDP_ADMIN_TOKEN?: string },
  dataDir: string,
): AdminTokenClient {
  if (values.RENTAL_IDP_ADMIN_TOKEN)
    return { adminToken: values.RENTAL_IDP_ADMIN_TOKEN, from: 'RENTAL_IDP_ADMIN_TOKEN' }
  if (values.IDP_ADMIN_TOKEN) return { adminToken: values.IDP_ADMIN_TOKEN, from: 'IDP_ADMIN_TOKEN' }
  return {
    adminToken: devIdpAdminToken(dataDir),
    from: `the development token in ${join(dataDir, DEV_IDP_ADMIN_TOKEN_FILE)}`,
  }
}

export function readRentalConfig(env: NodeJS.ProcessEnv, common: CommonConfig): RentalConfig {
  const values = readEnv(
    {
      RENTAL_IDP_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16, maxLength: 500 })),
      // the idp's own variable: one token in the environment serves both (npm start runs them together)
      IDP_ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
      RENTAL_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      RENTAL_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 16, maxLength: 500 })),
      RENTAL_IDP_WEBHOOK_SECRET: Type.Optional(Type.String({ minLength: 16, maxLength: 500 })),
      RENTAL_ENCRYPTION_KEY: Type.Optional(
        Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: '32 bytes, base64url' }),
      ),
      RENTAL_SESSION_TTL_HOURS: Type.Optional(Type.Integer({ minimum: 1, maximum: 720 })),
      RENTAL_SEED: Type.Optional(Type.Boolean()),
      RENTAL_MAX_API_TOKENS: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
      RENTAL_LEDGER_TOKEN: Type.Optional(Type.String({ pattern: '^[\\x21-\\x7e]{16,200}$' })),
      RENTAL_DEMO_WALLET_FILS: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 })),
      RENTAL_FEE_BPS: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
      RENTAL_INVOICE_ISSUER_NAME: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      RENTAL_INVOICE_ISSUER_ADDRESS: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
      RENTAL_INVOICE_ISSUER_TRN: Type.Optional(Type.String({ pattern: '^[0-9]{15}$' })),
      RENTAL_TASK_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
      RENTAL_EVENTS_STREAM_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
      RENTAL_OUTPUT_TTL_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 31_536_000 })),
      RENTAL_TRACE_URL_TEMPLATE: Type.Optional(
        Type.String({ pattern: '^https?://[\\x21-\\x7e]*\\{trace_id\\}[\\x21-\\x7e]*$', maxLength: 500 }),
      ),
      RENTAL_TASK_RETRIES: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
      RENTAL_TASK_RETRY_BASE_MS: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000 })),
      RENTAL_TASK_RETRY_CAP_MS: Type.Optional(Type.Integer({ minimum: 10, maximum: 86_400_000 })),
      RENTAL_TASK_SWEEP_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 300 })),
      RENTAL_OPERATORS: Type.Optional(Type.String({ maxLength: 10_000 })),
      RENTAL_WEBHOOKS_ALLOW_PRIVATE: Type.Optional(Type.Boolean()),
      RENTAL_WEBHOOK_RETRY_DELAYS_S: Type.Optional(
        Type.String({ pattern: '^\\d{1,6}(,\\d{1,6}){0,19}$', description: 'seconds, comma-separated' }),
      ),
      RENTAL_WEBHOOK_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
      RENTAL_MAX_WEBHOOKS: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      RENTAL_MARKET_CARD_TTL_S: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
      RENTAL_CONNECT_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
      RENTAL_CONNECT_MAX_ARGUMENT_BYTES: Type.Optional(Type.Integer({ minimum: 256, maximum: 1_048_576 })),
      RENTAL_CONNECT_TOKEN_TTL_S: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400 })),
      RENTAL_SCHEDULE_CHECK_MS: Type.Optional(Type.Integer({ minimum: 50, maximum: 60_000 })),
      RENTAL_FILE_MAX_BYTES: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 ** 40 })),
      RENTAL_ORG_FILES_MAX_BYTES: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 ** 50 })),
      RENTAL_ENCRYPTION_KEYS_RETIRED: Type.Optional(
        Type.String({
          pattern: '^[A-Za-z0-9_-]{43}(,[A-Za-z0-9_-]{43}){0,19}$',
          description: 'earlier RENTAL_ENCRYPTION_KEYs, comma-separated (32 bytes, base64url, each)',
        }),
      ),
      RENTAL_RATING_EDIT_WINDOW_S: Type.Optional(Type.Integer({ minimum: 0, maximum: 31_536_000 })),
      RENTAL_STEP_UP: Type.Optional(Type.Boolean()),
      RENTAL_STEP_UP_MAX_AGE_S: Type.Optional(Type.Integer({ minimum: 30, maximum: 86_400 })),
      RENTAL_STEP_UP_RELEASE_FILS: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 })),
      RENTAL_RETENTION_SWEEP_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
      RENTAL_AUDIT_ANCHOR_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 604_800 })),
      RENTAL_KYB_REQUIRED: Type.Optional(Type.Boolean()),
      RENTAL_KYB_HIRE_LIMIT_FILS: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 })),
      RENTAL_IDP_ORG_KEY: Type.Optional(Type.String({ pattern: '^svc_org_[\\x21-\\x7e]{16,300}$' })),
      RENTAL_FILE_URL_TTL_S: Type.Optional(Type.Integer({ minimum: 10, maximum: 86_400 })),
      RENTAL_SLA_LATENCY_P95_MS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
      RENTAL_SLA_CREDIT_CHECK_MS: Type.Optional(Type.Integer({ minimum: 50, maximum: 86_400_000 })),
    },
    env,
  )
  const production = common.nodeEnv === 'production'
  if (Boolean(values.RENTAL_CLIENT_ID) !== Boolean(values.RENTAL_CLIENT_SECRET))
    throw new ConfigError('RENTAL_CLIENT_ID and RENTAL_CLIENT_SECRET are given together or not at all')
  if (production && !values.RENTAL_CLIENT_ID && !values.RENTAL_IDP_ADMIN_TOKEN && !values.IDP_ADMIN_TOKEN)
    throw new ConfigError(
      'RENTAL_IDP_ADMIN_TOKEN (or IDP_ADMIN_TOKEN, or RENTAL_CLIENT_ID and RENTAL_CLIENT_SECRET) must be set when NODE_ENV=production',
    )
  if (production && !values.RENTAL_LEDGER_TOKEN)
    throw new ConfigError('RENTAL_LEDGER_TOKEN must be set when NODE_ENV=production')
  if (production && values.RENTAL_DEMO_WALLET_FILS)
    throw new ConfigError('RENTAL_DEMO_WALLET_FILS grants demo money: refused when NODE_ENV=production')
  if (production && !values.RENTAL_ENCRYPTION_KEY)
    throw new ConfigError('RENTAL_ENCRYPTION_KEY must be set when NODE_ENV=production')
  if (production && values.RENTAL_WEBHOOKS_ALLOW_PRIVATE)
    throw new ConfigError('RENTAL_WEBHOOKS_ALLOW_PRIVATE is for tests and development, never production')
  const encryptionKey =
    values.RENTAL_ENCRYPTION_KEY ??
    devFileSecret(common.dataDir, 'rental.encryption-key', () => randomBytes(32).toString('base64url'))
  return {
    idpClient:
      values.RENTAL_CLIENT_ID && values.RENTAL_CLIENT_SECRET
        ? {
            clientId: values.RENTAL_CLIENT_ID,
            clientSecret: values.RENTAL_CLIENT_SECRET,
            webhookSecret: values.RENTAL_IDP_WEBHOOK_SECRET,
          }
        : adminTokenClient(values, common.dataDir),
    encryptionKey: Buffer.from(encryptionKey, 'base64url'),
    sessionTtlHours: values.RENTAL_SESSION_TTL_HOURS ?? 12,
    seed: values.RENTAL_SEED ?? !production,
    maxApiTokens: values.RENTAL_MAX_API_TOKENS ?? 50,
    ledgerToken: values.RENTAL_LEDGER_TOKEN ?? DEV_LEDGER_TOKEN,
    // production has no grant: wallets are funded by a real payment provider (not built yet)
    demoWalletFils: production ? 0 : (values.RENTAL_DEMO_WALLET_FILS ?? 1_000_000),
    feeBps: values.RENTAL_FEE_BPS ?? 1000,
    invoiceIssuer: {
      name: values.RENTAL_INVOICE_ISSUER_NAME ?? 'Agent Rental Platform (development)',
      address: values.RENTAL_INVOICE_ISSUER_ADDRESS ?? 'Dubai, United Arab Emirates',
      trn: values.RENTAL_INVOICE_ISSUER_TRN ?? '100000000000003',
    },
    taskTimeoutMs: values.RENTAL_TASK_TIMEOUT_MS ?? 30_000,
    eventsStreamS: values.RENTAL_EVENTS_STREAM_S ?? 30,
    outputTtlS: values.RENTAL_OUTPUT_TTL_S ?? 3600,
    traceUrlTemplate: values.RENTAL_TRACE_URL_TEMPLATE,
    taskRetries: values.RENTAL_TASK_RETRIES ?? 10,
    taskRetryBackoff: {
      baseMs: values.RENTAL_TASK_RETRY_BASE_MS ?? 5_000,
      capMs: values.RENTAL_TASK_RETRY_CAP_MS ?? 300_000,
    },
    taskSweepS: values.RENTAL_TASK_SWEEP_S ?? 5,
    operators: operatorsOf(values.RENTAL_OPERATORS, production),
    connect: {
      allowPrivate: common.nodeEnv === 'development' || common.nodeEnv === 'test',
      timeoutMs: values.RENTAL_CONNECT_TIMEOUT_MS ?? 10_000,
      maxArgumentBytes: values.RENTAL_CONNECT_MAX_ARGUMENT_BYTES ?? 16_384,
      tokenTtlS: values.RENTAL_CONNECT_TOKEN_TTL_S ?? 900,
    },
    market: {
      allowPrivate: common.nodeEnv === 'development' || common.nodeEnv === 'test',
      cardTtlS: values.RENTAL_MARKET_CARD_TTL_S ?? 300,
    },
    webhooks: {
      allowPrivate:
        values.RENTAL_WEBHOOKS_ALLOW_PRIVATE ??
        (common.nodeEnv === 'development' || common.nodeEnv === 'test'),
      retryDelaysS: values.RENTAL_WEBHOOK_RETRY_DELAYS_S?.split(',').map(Number) ?? WEBHOOK_RETRY_DELAYS_S,
      timeoutMs: values.RENTAL_WEBHOOK_TIMEOUT_MS ?? 10_000,
      max: values.RENTAL_MAX_WEBHOOKS ?? 20,
    },
    scheduleCheckMs: values.RENTAL_SCHEDULE_CHECK_MS ?? 1000,
    files: {
      maxBytes: values.RENTAL_FILE_MAX_BYTES ?? 100 * 1024 * 1024,
      orgMaxBytes: values.RENTAL_ORG_FILES_MAX_BYTES ?? 1024 * 1024 * 1024,
      retiredKeys: (values.RENTAL_ENCRYPTION_KEYS_RETIRED?.split(',') ?? []).map((k) =>
        Buffer.from(k, 'base64url'),
      ),
    },
    ratingEditWindowS: values.RENTAL_RATING_EDIT_WINDOW_S ?? 86_400,
    stepUp: {
      enabled: values.RENTAL_STEP_UP ?? production,
      maxAgeS: values.RENTAL_STEP_UP_MAX_AGE_S ?? 600,
      releaseFils: values.RENTAL_STEP_UP_RELEASE_FILS ?? 100_000,
    },
    retentionSweepS: values.RENTAL_RETENTION_SWEEP_S ?? 3600,
    auditAnchorS: values.RENTAL_AUDIT_ANCHOR_S ?? 3600,
    onboarding: {
      kybRequired: values.RENTAL_KYB_REQUIRED ?? production,
      // 5,000 AED: a hire of a package above it needs the approved check (when one is required)
      hireLimitFils: values.RENTAL_KYB_HIRE_LIMIT_FILS ?? 500_000,
      idpOrgKey: values.RENTAL_IDP_ORG_KEY,
      mayEnrol: !production,
    },
    fileUrlTtlS: values.RENTAL_FILE_URL_TTL_S ?? 600,
    sla: {
      latencyP95Ms: values.RENTAL_SLA_LATENCY_P95_MS ?? 30_000,
      creditCheckMs: values.RENTAL_SLA_CREDIT_CHECK_MS ?? 60_000,
    },
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
