import { type Sealer } from '@svc/kit'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { b64uEncode } from '@svc/trust/base64url'
import { ed25519FromSeed } from '@svc/trust/ed25519'
import { CompactEncrypt } from 'jose'
import { type IdpDb, inTransaction } from '../../db.ts'
import { openUserKey } from '../identity/index.ts'
import { verifyPassword } from '../accounts/index.ts'
import { recordEvent } from '../accounts/index.ts'
import { userById } from '../accounts/index.ts'
import { idpError } from '../../errors.ts'

export const KEY_BACKUP_ALG = 'PBES2-HS512+A256KW'
/** PBKDF2-HMAC-SHA512 iterations: OWASP's floor (2023). A reader must allow this count (jose: maxPBES2Count). */
export const KEY_BACKUP_P2C = 210_000
export const MIN_PASSPHRASE = 12
/** An account without a password proves itself by a sign-in this recent. */
const RECENT_SIGN_IN_MS = 15 * 60_000

/**
 * Exports the account's did:key as a private JWK (RFC 8037) in a compact JWE encrypted under a
 * passphrase (RFC 7518 §4.8, PBES2), after the owner proves it is them again; the export is
 * receipted as `identity.key_backup_exported` in the same transaction that records it.
 */
export async function exportKeyBackup(
  deps: { db: IdpDb; sealer: Sealer; receipts: ReceiptWriter },
  session: { user_id: string; auth_time: Date },
  input: { passphrase: string; currentPassword?: string; ip?: string },
): Promise<{ did: string; jwe: string }> {
  const user = await userById(deps.db, session.user_id)
  if (!user?.did || !user.key_sealed) throw idpError('not_found', 'this account has no key')
  if (input.passphrase.length < MIN_PASSPHRASE)
    throw idpError('invalid_request', `choose a passphrase of at least ${MIN_PASSPHRASE} characters`)
  if (user.password_hash) {
    if (!(await verifyPassword(user.password_hash, input.currentPassword ?? '')))
      throw idpError('invalid_request', 'the current password is not right')
  } else if (Date.now() - session.auth_time.getTime() > RECENT_SIGN_IN_MS)
    throw idpError('login_required', 'sign in again (within 15 minutes) to export your key')

  const seed = openUserKey(deps.sealer, user.id, user.key_sealed)
  const jwk = {
    kty: 'OKP',
    crv: 'Ed25519',
    x: b64uEncode(ed25519FromSeed(seed).publicKey),
    d: b64uEncode(seed),
    kid: `${user.did}#${user.did.slice('did:key:'.length)}`,
  }
  const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(jwk)))
    .setProtectedHeader({ alg: KEY_BACKUP_ALG, enc: 'A256GCM', cty: 'jwk+json' })
    .setKeyManagementParameters({ p2c: KEY_BACKUP_P2C })
    .encrypt(new TextEncoder().encode(input.passphrase))
  await inTransaction(deps.db, async (trx) => {
    await recordEvent(trx, user.id, 'key_backup_exported', { ip: input.ip })
    await deps.receipts.record(trx, {
      type: 'identity.key_backup_exported',
      subject: user.did!,
      data: { format: 'jwe', alg: KEY_BACKUP_ALG, enc: 'A256GCM' },
    })
  })
  return { did: user.did, jwe }
}
