import { timingSafeEqual } from 'node:crypto'
import { AppError, type Kv } from '@svc/kit'
import { inTransaction } from '../../db.ts'
import { credentialAudience, issueNonce, C_NONCE_TTL_S } from '../credentials/index.ts'
import { PRE_AUTHORIZED_CODE, TX_CODE_MAX_FAILURES, txCodeDigest } from '../credentials/index.ts'
import type { CredentialsService } from '../credentials/index.ts'
import type { GrantDeps } from './grants.ts'
import { ACCESS_TOKEN_TTL_S, signAccessToken, tokenType } from './tokens.ts'
import { idpError } from '../../errors.ts'

export { PRE_AUTHORIZED_CODE }
/** The `client_id` of credential access tokens: wallets are public and need not be registered. */
export const WALLET_CLIENT = 'urn:svc:wallet'

const invalidGrant = (message: string) => idpError('invalid_grant', message)

/** Why the offer behind a code gives no token, or undefined when it may. */
function refusal(
  offer: Awaited<ReturnType<CredentialsService['lockOffer']>>,
  txCode: string | undefined,
  now: Date,
): AppError | 'wrong_tx_code' | undefined {
  // OpenID4VCI §6.3: a wrong, spent or expired code is invalid_grant
  if (!offer || offer.redeemed_at || offer.expires_at <= now)
    return invalidGrant('the pre-authorized code is invalid, expired or already used')
  if (!offer.tx_code_hash) {
    if (txCode !== undefined)
      return idpError('invalid_request', 'this offer has no transaction code: send no tx_code')
    return undefined
  }
  if (txCode === undefined)
    return idpError('invalid_request', 'this offer needs its transaction code (tx_code)')
  if (offer.tx_code_failures >= TX_CODE_MAX_FAILURES)
    return invalidGrant('too many wrong transaction codes: ask for a new offer')
  return undefined
}

/**
 * OpenID4VCI §6.1: a wallet redeems a credential offer's pre-authorized code, anonymously (it
 * may name itself with `client_id`), with the transaction code when the offer has one. The answer
 * is an access token for the credential endpoint alone (`aud` = that endpoint, the account's DID
 * as `sub`, the offered configurations, DPoP-bound when a proof came with the request) and, as
 * identity-provider.md asks, a first `c_nonce`. A wrong transaction code is counted in the same
 * transaction that refuses it; the fifth ends the offer.
 */
export async function preAuthorizedCodeGrant(
  deps: GrantDeps & { kv: Kv },
  body: { 'pre-authorized_code'?: string; tx_code?: string; client_id?: string },
  jkt?: string,
) {
  const code = body['pre-authorized_code']
  if (!code) throw idpError('invalid_request', 'pre-authorized_code is required')
  const outcome = await inTransaction(deps.db, async (trx) => {
    const now = deps.now()
    const offer = await deps.credentials.lockOffer(trx, deps.credentials.digest(code))
    const refused = refusal(offer, body.tx_code, now)
    if (refused instanceof AppError) return refused
    if (offer!.tx_code_hash) {
      const given = txCodeDigest(code, body.tx_code!)
      if (!timingSafeEqual(given, offer!.tx_code_hash)) {
        const failures = await deps.credentials.recordTxCodeFailure(trx, offer!.id)
        return invalidGrant(
          failures >= TX_CODE_MAX_FAILURES
            ? 'wrong transaction code: the offer has ended, ask for a new one'
            : 'wrong transaction code',
        )
      }
    }
    if (!(await deps.credentials.redeemOffer(trx, offer!.id, now)))
      return invalidGrant('the pre-authorized code is invalid, expired or already used')
    return offer!
  })
  if (outcome instanceof AppError) throw outcome
  const account = await deps.accounts.live(deps.db, { id: outcome.user_id })
  if (!account?.did) throw invalidGrant('the account behind this offer no longer exists')
  const accessToken = await signAccessToken(
    deps.keys,
    {
      iss: deps.issuer,
      sub: account.did,
      aud: credentialAudience(deps.issuer),
      client_id: WALLET_CLIENT,
      ...(body.client_id ? { wallet_client_id: body.client_id } : {}),
      credential_configuration_ids: outcome.configuration_ids,
    },
    jkt,
  )
  return {
    access_token: accessToken,
    token_type: tokenType(jkt),
    expires_in: ACCESS_TOKEN_TTL_S,
    c_nonce: await issueNonce(deps.kv),
    c_nonce_expires_in: C_NONCE_TTL_S,
  }
}
