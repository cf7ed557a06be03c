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
 * The log's signing key: from LEDGER_SIGNING_KEY, or in development a key made once and kept
 * beside the embedded databases (mode 0600), so checkpoints stay verifiable across restarts.
 */
export function logSignerKey(config: LedgerConfig, dataDir: string): string {
  if (config.signerKey) return config.signerKey
  const path = join(dataDir, `ledger-${config.origin.replace(/[^A-Za-z0-9.-]/g, '_')}.signing-key`)
  try {
    return readFileSync(path, 'utf8').trim()
  } catch {
    const key = generateNoteKey(config.origin).signerKey
    try {
      mkdirSync(dataDir, { recursive: true })
      writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'wx' })
      return key
    } catch {
      return readFileSync(path, 'utf8').trim()
    }
  }
}

/** The verifier key of a signed-note Ed25519 signer key: same name and key id, the public key of the seed. */
export function verifierKeyOf(signerKey: string): string {
  const { name, seed } = decodeEd25519SignerKey(signerKey, ED25519_TYPE)
  return encodeEd25519Keys(name, ED25519_TYPE, seed).verifierKey
}

export interface LogKeys {
  signer: NoteSigner
  verifierKey: string
}

export function logKeys(config: LedgerConfig, dataDir: string): LogKeys {
  const signerKey = logSignerKey(config, dataDir)
  return { signer: signerFromKey(signerKey), verifierKey: verifierKeyOf(signerKey) }
}
