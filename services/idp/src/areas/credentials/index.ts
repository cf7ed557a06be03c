import { defineArea } from '../../context.ts'
import { credentialRoutes } from './routes.ts'

export { C_NONCE_TTL_S, issueNonce } from './nonce.ts'
export { credentialAudience, PRE_AUTHORIZED_CODE, TX_CODE_MAX_FAILURES, txCodeDigest } from './offers.ts'
export { offerSection } from './pages.ts'
export { credentialsService } from './service.ts'

/** Verifiable credentials (OpenID4VCI): offers, nonces and issuance. */
export const credentialsArea = defineArea({
  name: 'credentials',
  needs: ['keys', 'identity', 'receipts'],
  mount(app, ctx, { keys, identity, receipts }) {
    credentialRoutes(app, {
      db: ctx.db,
      kv: ctx.kv,
      keys,
      issuer: ctx.issuer,
      dpop: ctx.dpop,
      identity: identity.ledger,
      receipts,
      now: ctx.config.now,
      origin: ctx.origin,
      discoveryLimit: ctx.discoveryLimit,
      nonceRatePerMinute: ctx.config.tokenRatePerMinute.ip,
    })
    return undefined
  },
})
