import { defineArea } from '../../context.ts'
import { credentialsService } from './service.ts'
import { credentialRoutes } from './routes.ts'

export { C_NONCE_TTL_S, issueNonce } from './nonce.ts'
export { credentialAudience, PRE_AUTHORIZED_CODE, TX_CODE_MAX_FAILURES, txCodeDigest } from './offers.ts'
export { offerSection } from './pages.ts'

/** What the token endpoint asks of credential offers: their digest, lock, transaction-code failures and redemption. */
export type CredentialsService = typeof credentialsService

/** Verifiable credentials (OpenID4VCI): offers, nonces and issuance. */
export const credentialsArea = defineArea({
  name: 'credentials',
  needs: ['keys', 'identity', 'receipts', 'accounts'],
  mount: (): CredentialsService => credentialsService,
  routes(app, ctx, { keys, identity, receipts, accounts }) {
    credentialRoutes(app, {
      db: ctx.db,
      kv: ctx.kv,
      keys,
      issuer: ctx.issuer,
      dpop: ctx.dpop,
      identity: identity.ledger,
      receipts,
      accounts,
      now: ctx.config.now,
      origin: ctx.origin,
      discoveryLimit: ctx.discoveryLimit,
      nonceRatePerMinute: ctx.config.tokenRatePerMinute.ip,
    })
  },
})
