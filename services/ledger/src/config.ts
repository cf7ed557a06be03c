import { createHash } from 'node:crypto'
import { type CommonConfig, ConfigError, readEnv, readTopology } from '@svc/kit'
import { cosignatureVerifierFromKey } from '@svc/trust/cosignature'
import { Type } from 'typebox'

export interface LedgerConfig {
  /** The log's origin line (C2SP tlog-checkpoint) and the name of its key. */
  origin: string
  /** The log's signed-note signer key (PRIVATE+KEY+…); undefined: kept in the data directory (development). */
  signerKey: string | undefined
  /** Writers: name and the SHA-256 of their bearer token (tokens are never kept in memory in clear). */
  writers: Array<{ name: string; tokenHash: Buffer }>
  /**
   * Witnesses whose cosignatures the log accepts (tlog-cosignature verifier keys); those with a
   * submission prefix are asked to cosign each new checkpoint (C2SP tlog-witness add-checkpoint).
   */
  witnesses: WitnessTarget[]
  /** Development: the idp to find the witness at (its svc-witness.json) when LEDGER_WITNESSES is unset. */
  discoverWitness: string | undefined
  batchMax: number
  batchWaitMs: number
  /** The least time between two rounds asking the witnesses to cosign: a busy log has its latest checkpoint cosigned about once per interval, not once per batch. */
  witnessIntervalMs: number
  /** The key webhook secrets are derived from; undefined: kept in the data directory (development). */
  webhookKey: string | undefined
  /**
   * Webhook URLs may be http and private addresses (never a cloud metadata one): by default in
   * development and tests; LEDGER_WEBHOOKS_ALLOW_PRIVATE sets it (writers on a private network).
   */
  webhooksAllowPrivate: boolean
}

export interface WitnessTarget {
  verifierKey: string
  /** `POST <prefix>/add-checkpoint`; undefined: the witness posts its cosignatures itself. */
  prefix?: string
}

export const DEV_WRITERS = 'idp:dev-ledger-writer-idp,rental:dev-ledger-writer-rental'

const WRITERS = /^[a-z][a-z0-9_-]{0,30}:[\x21-\x7e]{16,200}(,[a-z][a-z0-9_-]{0,30}:[\x21-\x7e]{16,200})*$/

export function readLedgerConfig(env: NodeJS.ProcessEnv, common: CommonConfig): LedgerConfig {
  const values = readEnv(
    {
      LEDGER_ORIGIN: Type.Optional(Type.String({ pattern: '^[\\x21-\\x7e]{1,200}$' })),
      LEDGER_SIGNING_KEY: Type.Optional(Type.String({ pattern: '^PRIVATE\\+KEY\\+' })),
      LEDGER_WRITERS: Type.Optional(Type.String({ pattern: WRITERS.source })),
      LEDGER_WITNESSES: Type.Optional(Type.String({ minLength: 1 })),
      LEDGER_BATCH_MAX: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096 })),
      LEDGER_BATCH_WAIT_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
      LEDGER_WITNESS_INTERVAL_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
      LEDGER_WEBHOOK_KEY: Type.Optional(Type.String({ minLength: 32 })),
      LEDGER_WEBHOOKS_ALLOW_PRIVATE: Type.Optional(Type.Boolean()),
    },
    env,
  )
  if (common.nodeEnv === 'production') {
    if (!values.LEDGER_SIGNING_KEY)
      throw new ConfigError('LEDGER_SIGNING_KEY must be set when NODE_ENV=production')
    if (!values.LEDGER_WRITERS) throw new ConfigError('LEDGER_WRITERS must be set when NODE_ENV=production')
    if (!values.LEDGER_WEBHOOK_KEY)
      throw new ConfigError('LEDGER_WEBHOOK_KEY must be set when NODE_ENV=production')
    if (!values.LEDGER_ORIGIN) throw new ConfigError('LEDGER_ORIGIN must be set when NODE_ENV=production')
  }
  const url = readTopology(env).ledger.url
  return {
    origin: values.LEDGER_ORIGIN ?? url.replace(/^https?:\/\//, '').replace(/\/+$/, ''),
    signerKey: values.LEDGER_SIGNING_KEY,
    writers: (values.LEDGER_WRITERS ?? DEV_WRITERS).split(',').map((pair) => {
      const at = pair.indexOf(':')
      return {
        name: pair.slice(0, at),
        tokenHash: createHash('sha256')
          .update(pair.slice(at + 1))
          .digest(),
      }
    }),
    witnesses: witnesses(values.LEDGER_WITNESSES),
    discoverWitness:
      common.nodeEnv === 'development' && !values.LEDGER_WITNESSES ? readTopology(env).idp.url : undefined,
    batchMax: values.LEDGER_BATCH_MAX ?? 512,
    batchWaitMs: values.LEDGER_BATCH_WAIT_MS ?? 2,
    witnessIntervalMs: values.LEDGER_WITNESS_INTERVAL_MS ?? 1000,
    webhookKey: values.LEDGER_WEBHOOK_KEY,
    webhooksAllowPrivate:
      values.LEDGER_WEBHOOKS_ALLOW_PRIVATE ?? (common.nodeEnv === 'development' || common.nodeEnv === 'test'),
  }
}

/** `<verifier key>[ <submission prefix>]`, comma-separated. */
function witnesses(list: string | undefined): WitnessTarget[] {
  const entries = list?.split(',').map((entry) => entry.trim().split(/\s+/)) ?? []
  return entries.map(([key, prefix, ...rest]) => {
    const problem = (why: string) =>
      new ConfigError(`LEDGER_WITNESSES: ${JSON.stringify([key, prefix].join(' '))} ${why}`)
    try {
      cosignatureVerifierFromKey(key!)
    } catch (err) {
      throw problem(`is not a cosignature verifier key (${(err as Error).message})`)
    }
    if (rest.length || (prefix !== undefined && !/^https?:\/\/[^\s]+$/.test(prefix)))
      throw problem('is not "<verifier key> [<submission prefix URL>]"')
    return { verifierKey: key!, ...(prefix ? { prefix: prefix.replace(/\/+$/, '') } : {}) }
  })
}
