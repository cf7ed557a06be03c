import { randomBytes } from 'node:crypto'
import { devFileSecret } from '@svc/kit'
import {
  decodeEd25519SignerKey,
  ED25519_TYPE,
  encodeEd25519Keys,
  generateNoteKey,
  type NoteSigner,
  signerFromKey,
} from '@svc/trust/note'
import type { LedgerConfig } from './config.ts'

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
      `ledger-${config.origin}.signing-key`,
      () => generateNoteKey(config.origin).signerKey,
    )
  const webhookKey =
    config.webhookKey ??
    devFileSecret(dataDir, `ledger-${config.origin}.webhook-key`, () => randomBytes(32).toString('base64url'))
  return { signer: signerFromKey(signerKey), verifierKey: verifierKeyOf(signerKey), webhookKey }
}
