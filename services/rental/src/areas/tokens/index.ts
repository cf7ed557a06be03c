import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { deleteTokensOf, revokeCreatedBy } from './store.ts'
import { tokenRoutes } from './routes.ts'
import { issueOrgKey, type TokenActor, tokensOf, type VerifiedApiToken, verifyApiToken } from './service.ts'

export { ORG_KEY_SCOPES } from './scopes.ts'
/** A token's response schemas, as the /v1 key routes show them. */
export { ApiToken as ApiTokenSchema, IssuedToken as IssuedTokenSchema } from './routes.ts'
export { verifyApiToken } from './service.ts'

export interface TokenService {
  /** The live token a `Bearer agt_…` value names, or null. */
  verify(bearer: string | undefined): Promise<VerifiedApiToken | null>
  /** Revokes the live tokens a member created (in the caller's transaction); how many. */
  revokeCreatedBy(trx: RentalDb, memberId: string): Promise<number>
  /** Erasure: deletes every token of the organization (in the caller's transaction); how many. */
  eraseOrg(trx: RentalDb, orgId: string): Promise<number>
  /** The live organization key (`ork_…`) a bearer value names, or null (an `agt_` token is not one). */
  verifyOrgKey(bearer: string | undefined): Promise<VerifiedApiToken | null>
  /** Issues an organization key (scopes the issuer's role holds); the plaintext is in the answer, once. */
  issueOrgKey(
    creator: TokenActor,
    input: { label: string; scopes: readonly string[]; expiresAt: Date | null },
  ): ReturnType<typeof issueOrgKey>
  /** The organization's live keys (never their plaintext). */
  orgKeys(orgId: string): ReturnType<typeof tokensOf>
}

/** `agt_` API tokens for the A2A surface: issued, listed, narrowed, rotated, revoked. Table: api_tokens. */
export const tokensArea = defineArea({
  name: 'tokens',
  mount: (_app, ctx): TokenService => ({
    verify: (bearer) => verifyApiToken(ctx.db, bearer, ctx.now()),
    revokeCreatedBy: (trx, memberId) => revokeCreatedBy(trx, memberId, ctx.now()),
    eraseOrg: (trx, orgId) => deleteTokensOf(trx, orgId),
    verifyOrgKey: async (bearer) => {
      const key = await verifyApiToken(ctx.db, bearer, ctx.now())
      return key?.kind === 'org' ? key : null
    },
    issueOrgKey: (creator, input) => issueOrgKey(ctx.db, creator, input, ctx.config.maxApiTokens, ctx.now()),
    orgKeys: (orgId) => tokensOf(ctx.db, orgId, 'org'),
  }),
  routes(app, ctx) {
    tokenRoutes(app, ctx.db, ctx.sessions, ctx.config.maxApiTokens)
  },
})
