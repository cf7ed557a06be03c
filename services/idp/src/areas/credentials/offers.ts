import { randomBytes, randomInt } from 'node:crypto'
import type { IdpDb } from '../../db.ts'
import { CONFIGURATION_IDS } from './metadata.ts'
import { digest, insertOffer } from './store.ts'

/** The audience of credential access tokens: they are good at the credential endpoint only. */
export const credentialAudience = (issuer: string) => `${issuer}/credential`

export const PRE_AUTHORIZED_CODE = 'urn:ietf:params:oauth:grant-type:pre-authorized_code'
/** An offer waits five minutes for its wallet: long enough to scan, too short to linger. */
export const OFFER_TTL_S = 300
/** Wrong transaction codes an offer survives before it ends (the code is only six digits). */
export const TX_CODE_MAX_FAILURES = 5
export const TX_CODE_LENGTH = 6

/** The stored form of a transaction code: bound to its pre-authorized code, which only the wallet knows. */
export const txCodeDigest = (preAuthorizedCode: string, txCode: string) =>
  digest('tx_code', preAuthorizedCode, txCode)

/**
 * A credential offer by value (OpenID4VCI §4.1) of the user's identity credential in every format,
 * with a single-use pre-authorized code (only its SHA-256 kept) and, when asked, a six-digit
 * transaction code shown to the user beside the offer and never inside it.
 */
export async function createOffer(
  db: IdpDb,
  input: { issuer: string; userId: string; withTxCode: boolean; now: Date },
) {
  const code = randomBytes(32).toString('base64url')
  const txCode = input.withTxCode
    ? String(randomInt(0, 10 ** TX_CODE_LENGTH)).padStart(TX_CODE_LENGTH, '0')
    : undefined
  await insertOffer(db, {
    id: `vco_${randomBytes(12).toString('base64url')}`,
    code_hash: digest(code),
    user_id: input.userId,
    configuration_ids: CONFIGURATION_IDS,
    tx_code_hash: txCode ? txCodeDigest(code, txCode) : null,
    expires_at: new Date(input.now.getTime() + OFFER_TTL_S * 1000),
  })
  const offer = {
    credential_issuer: input.issuer,
    credential_configuration_ids: CONFIGURATION_IDS,
    grants: {
      [PRE_AUTHORIZED_CODE]: {
        'pre-authorized_code': code,
        ...(txCode
          ? {
              tx_code: {
                input_mode: 'numeric',
                length: TX_CODE_LENGTH,
                description: 'The six-digit code shown on your svc account page',
              },
            }
          : {}),
      },
    },
  }
  const uri = `openid-credential-offer://?credential_offer=${encodeURIComponent(JSON.stringify(offer))}`
  return { offer, uri, txCode, expiresIn: OFFER_TTL_S }
}
