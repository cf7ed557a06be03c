import { ledgerError } from '../../errors.ts'
import { b64uDecode } from '@svc/trust/base64url'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import { verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash } from '@svc/trust/merkle'
import type { Static } from 'typebox'
import type { SignedReceipt } from './schemas.ts'
import type { NewLeaf } from './store.ts'

export const MAX_ENTRY_BYTES = 16 * 1024
const MAX_CLOCK_SKEW_MS = 5 * 60_000

/**
 * Checks a signed receipt and gives the leaf it becomes. The entry is the JCS form of
 * {receipt, signature}, so the log commits to the signature too and equal submissions are
 * byte-identical (Ed25519 signatures are deterministic).
 */
export function leafOf(
  signed: Static<typeof SignedReceipt>,
  writer: string,
  now = Date.now(),
): Omit<NewLeaf, 'leaf_index'> {
  const { receipt } = signed
  const issuedAt = new Date(receipt.issued_at)
  if (Number.isNaN(issuedAt.getTime()))
    throw ledgerError('malformed_receipt', 'receipt.issued_at is not a valid date-time')
  if (issuedAt.getTime() > now + MAX_CLOCK_SKEW_MS)
    throw ledgerError('malformed_receipt', 'receipt.issued_at is in the future')
  let publicKey: Uint8Array
  try {
    publicKey = ed25519FromDidKey(receipt.issuer)
  } catch (err) {
    throw ledgerError(
      'malformed_receipt',
      `receipt.issuer is not an Ed25519 did:key: ${(err as Error).message}`,
    )
  }
  let body: Uint8Array
  try {
    body = canonicalBytes(receipt)
  } catch (err) {
    throw ledgerError('malformed_receipt', `receipt has no canonical JSON form: ${(err as Error).message}`)
  }
  let signature: Uint8Array
  try {
    signature = b64uDecode(signed.signature)
  } catch {
    throw ledgerError('bad_signature', 'signature is not canonical base64url')
  }
  if (!verifyEd25519(publicKey, body, signature))
    throw ledgerError('bad_signature', 'the signature does not verify against the issuer key')
  const entry = canonicalBytes({ receipt, signature: signed.signature })
  if (entry.length > MAX_ENTRY_BYTES)
    throw ledgerError(
      'receipt_too_large',
      `a receipt may take at most ${MAX_ENTRY_BYTES} bytes in canonical form`,
    )
  return {
    leaf_hash: Buffer.from(leafHash(entry)),
    entry: Buffer.from(entry),
    receipt_type: receipt.type,
    issuer_did: receipt.issuer,
    subject: receipt.subject,
    issued_at: issuedAt,
    writer,
  }
}
