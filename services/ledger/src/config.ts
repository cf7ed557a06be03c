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
  /** Witnesses whose cosignatures the log accepts: tlog-cosignature verifier keys. */
  witnessKeys: string[]
  batchMax: number
  batchWaitMs: number
  /** The key webhook secrets are derived from; undefined: kept in the data directory (development). */
  webhookKey: string | undefined
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
      LEDGER_WEBHOOK_KEY: Type.Optional(Type.String({ minLength: 32 })),
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
    witnessKeys: witnessKeys(values.LEDGER_WITNESSES),
    batchMax: values.LEDGER_BATCH_MAX ?? 512,
    batchWaitMs: values.LEDGER_BATCH_WAIT_MS ?? 2,
    webhookKey: values.LEDGER_WEBHOOK_KEY,
  }
}

function witnessKeys(list: string | undefined): string[] {
  const keys = list?.split(',').map((k) => k.trim()) ?? []
  for (const key of keys)
    try {
      cosignatureVerifierFromKey(key)
    } catch (err) {
      throw new ConfigError(
        `LEDGER_WITNESSES: ${JSON.stringify(key)} is not a cosignature verifier key (${(err as Error).message})`,
      )
    }
  return keys
}
