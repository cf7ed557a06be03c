import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  decodeEd25519SignerKey,
  ED25519_TYPE,
  encodeEd25519Keys,
  generateNoteKey,
  type NoteSigner,
  signerFromKey,
} from '@svc/trust/note'
import type { LedgerConfig } from './config.ts'

/**
 * A development secret made once and kept beside the embedded databases (mode 0600), so what
 * it signs stays verifiable across restarts. Production passes every secret in the environment.
 */
function devFileSecret(dataDir: string, name: string, make: () => string): string {
  const path = join(dataDir, name)
  try {
    return readFileSync(path, 'utf8').trim()
  } catch {
    const secret = make()
    try {
      mkdirSync(dataDir, { recursive: true })
      writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: 'wx' })
      return secret
    } catch {
      return readFileSync(path, 'utf8').trim()
    }
  }
}

const fileSafe = (text: string) => text.replace(/[^A-Za-z0-9.-]/g, '_')

/** The verifier key of a signed-note Ed25519 signer key: same name and key id, the public key of the seed. */
export function verifierKeyOf(signerKey: string): string {
  const { name, seed } = decodeEd25519SignerKey(signerKey, ED25519_TYPE)
  return encodeEd25519Keys(name, ED25519_TYPE, seed).verifierKey
}

export interface LogKeys {
  signer: NoteSigner
  verifierKey: string
  /** The key webhook secrets are derived from. */
  webhookKey: string
}

export function logKeys(config: LedgerConfig, dataDir: string): LogKeys {
  const signerKey =
    config.signerKey ??
    devFileSecret(
      dataDir,
      `ledger-${fileSafe(config.origin)}.signing-key`,
      () => generateNoteKey(config.origin).signerKey,
    )
  const webhookKey =
    config.webhookKey ??
    devFileSecret(dataDir, `ledger-${fileSafe(config.origin)}.webhook-key`, () =>
      randomBytes(32).toString('base64url'),
    )
  return { signer: signerFromKey(signerKey), verifierKey: verifierKeyOf(signerKey), webhookKey }
}
