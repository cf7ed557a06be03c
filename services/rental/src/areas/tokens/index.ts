import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { revokeCreatedBy } from './store.ts'
import { tokenRoutes } from './routes.ts'
import { type VerifiedApiToken, verifyApiToken } from './service.ts'

export interface TokenService {
  /** The live token a `Bearer agt_…` value names, or null. */
  verify(bearer: string | undefined): Promise<VerifiedApiToken | null>
  /** Revokes the live tokens a member created (in the caller's transaction); how many. */
  revokeCreatedBy(trx: RentalDb, memberId: string): Promise<number>
}

/** `agt_` API tokens for the A2A surface: issued, listed, narrowed, rotated, revoked. Table: api_tokens. */
export const tokensArea = defineArea({
  name: 'tokens',
  mount: (_app, ctx): TokenService => ({
    verify: (bearer) => verifyApiToken(ctx.db, bearer, ctx.now()),
    revokeCreatedBy: (trx, memberId) => revokeCreatedBy(trx, memberId, ctx.now()),
  }),
  routes(app, ctx) {
    tokenRoutes(app, ctx.db, ctx.sessions, ctx.config.maxApiTokens)
  },
})
