import { defineArea } from '../../context.ts'
import { tokenRoutes } from './routes.ts'
import { type VerifiedApiToken, verifyApiToken } from './service.ts'

export interface TokenService {
  /** The live token a `Bearer agt_…` value names, or null. */
  verify(bearer: string | undefined): Promise<VerifiedApiToken | null>
}

/** `agt_` API tokens for the A2A surface: issued, listed, narrowed, rotated, revoked. Table: api_tokens. */
export const tokensArea = defineArea({
  name: 'tokens',
  mount: (_app, ctx): TokenService => ({ verify: (bearer) => verifyApiToken(ctx.db, bearer, ctx.now()) }),
  routes(app, ctx) {
    tokenRoutes(app, ctx.db, ctx.sessions, ctx.config.maxApiTokens)
  },
})
