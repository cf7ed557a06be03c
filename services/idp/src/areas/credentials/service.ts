import { createHash } from 'node:crypto'
import { AppError, type Kv } from '@svc/kit'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { canonicalBytes } from '@svc/trust/jcs'
import type { FastifyRequest } from 'fastify'
import { inTransaction } from '../../db.ts'
import { type PresentedTokenDeps, presentedToken } from '../../oauth/presented-token.ts'
import type { Identity } from '../identity/service.ts'
import { isDenied } from '../../oauth/denylist.ts'
import { credentialAudience } from './offers.ts'
import { type AccountClaims, jwtVc, ldpVc } from './issue.ts'
import { formatOf } from './metadata.ts'
import { spendNonce } from './nonce.ts'
import { type Holder, invalidProof, verifyProof } from './proof.ts'
import type { AccountsService } from '../accounts/index.ts'
import { digest, lockOffer, recordTxCodeFailure, redeemOffer } from './store.ts'

export interface CredentialDeps extends PresentedTokenDeps {
  kv: Kv
  identity: Identity
  receipts: ReceiptWriter
  now: () => Date
  accounts: AccountsService
}

export interface CredentialRequest {
  credential_configuration_id?: string
  credential_identifier?: string
  proofs?: { jwt: string[] }
  credential_response_encryption?: object
}

const requestError = (code: string, message: string) => new AppError(400, code, message)

/**
 * The credential access token of the request (Bearer, or DPoP when bound): one of ours, for the
 * credential endpoint, not revoked, whose account (its `sub`, a DID) still stands. Anything else
 * is 401 `invalid_token` with a challenge (RFC 6750 §3).
 */
export async function credentialToken(deps: CredentialDeps, request: FastifyRequest) {
  const { payload, invalidToken } = await presentedToken(deps, request)
  if (payload.aud !== credentialAudience(deps.issuer))
    throw invalidToken('this access token is not for the credential endpoint')
  if (await isDenied(deps.kv, payload.jti)) throw invalidToken('the access token was revoked')
  const account =
    typeof payload.sub === 'string' ? await deps.accounts.live(deps.db, { did: payload.sub }) : undefined
  if (!account?.did) throw invalidToken('the account behind this access token no longer exists')
  const offered = Array.isArray(payload.credential_configuration_ids)
    ? (payload.credential_configuration_ids as string[])
    : []
  const walletClientId = typeof payload.wallet_client_id === 'string' ? payload.wallet_client_id : undefined
  const claims: AccountClaims = {
    did: account.did,
    email: account.email,
    email_verified: account.email_verified_at !== null,
    ...(account.name ? { name: account.name } : {}),
  }
  return { claims, offered, walletClientId }
}

/** The request's configuration and its format, or the OpenID4VCI §8.3.1.2 error that refuses it. */
function configurationOf(body: CredentialRequest, offered: string[]) {
  if (body.credential_identifier !== undefined)
    throw requestError(
      'invalid_credential_request',
      'this issuer gives no credential identifiers: name the credential_configuration_id',
    )
  if (body.credential_response_encryption !== undefined)
    throw requestError('invalid_encryption_parameters', 'credential response encryption is not supported')
  const id = body.credential_configuration_id
  if (id === undefined)
    throw requestError('invalid_credential_request', 'credential_configuration_id is required')
  const format = formatOf(id)
  if (!format) throw requestError('unknown_credential_configuration', `no credential configuration ${id}`)
  if (!offered.includes(id))
    throw requestError('credential_request_denied', `the offer behind this access token did not offer ${id}`)
  return { id, format }
}

/** Every key proof verified, one nonce shared by all of them, one credential per distinct key. */
async function provenHolders(deps: CredentialDeps, body: CredentialRequest, walletClientId?: string) {
  const jwts = body.proofs?.jwt
  if (!jwts?.length) throw invalidProof('proofs with at least one jwt key proof are required')
  const verified = []
  for (const jwt of jwts) verified.push(await verifyProof(jwt, { issuer: deps.issuer, walletClientId }))
  const nonce = verified[0]!.nonce
  if (verified.some((v) => v.nonce !== nonce)) throw invalidProof('every key proof carries the same c_nonce')
  const holders = verified.map((v) => v.holder)
  if (new Set(holders.map((h) => h.id)).size !== holders.length)
    throw invalidProof('each key proof is signed by a different key')
  return { holders, nonce }
}

const digestOf = (credential: string | Record<string, unknown>) =>
  createHash('sha256')
    .update(typeof credential === 'string' ? credential : canonicalBytes(credential))
    .digest('hex')

/**
 * OpenID4VCI §8: one credential per key proof, in the configuration's format, once the proofs'
 * c_nonce is spent (a stale or spent one is `invalid_nonce`). Each issuance is receipted
 * (`credential.issued`, subject the account's DID, data the configuration, format and the
 * credential's SHA-256: no address, no holder key).
 */
export async function issueCredentials(
  deps: CredentialDeps,
  token: Awaited<ReturnType<typeof credentialToken>>,
  body: CredentialRequest,
) {
  const configuration = configurationOf(body, token.offered)
  const { holders, nonce } = await provenHolders(deps, body, token.walletClientId)
  if (configuration.format === 'ldp_vc' && holders.some((h: Holder) => h.method !== 'did:key'))
    throw invalidProof('an ldp_vc credential is bound to a did:key: sign the proof with a did:key kid')
  if (!(await spendNonce(deps.kv, nonce)))
    throw requestError('invalid_nonce', 'the c_nonce is unknown, expired or already used: get a new one')
  const now = deps.now()
  const credentials: Array<string | Record<string, unknown>> = []
  for (const holder of holders)
    credentials.push(
      configuration.format === 'jwt_vc_json'
        ? await jwtVc(deps.identity, holder, token.claims, now)
        : ldpVc(deps.identity, holder.id, token.claims, now),
    )
  await inTransaction(deps.db, async (trx) => {
    for (const credential of credentials)
      await deps.receipts.record(trx, {
        type: 'credential.issued',
        subject: token.claims.did,
        data: {
          credential_configuration_id: configuration.id,
          format: configuration.format,
          digest: `sha256:${digestOf(credential)}`,
        },
      })
  })
  return { credentials: credentials.map((credential) => ({ credential })) }
}

/** What the token endpoint asks of credential offers (in the caller's db or transaction). */
export const credentialsService = {
  /** The stored hash of a pre-authorized code. */
  digest,
  /** The offer behind a code, locked until the caller's transaction ends. */
  lockOffer,
  /** Counts a wrong transaction code; answers the failures so far. */
  recordTxCodeFailure,
  /** Redeems the offer once: false when another request did first. */
  redeemOffer,
}
