import type { App } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import type { PresentedTokenDeps } from '../../oauth/presented-token.ts'
import type { TokenService } from '../token/index.ts'
import { CLAIMS_BY_SCOPE, parseScope } from '../../oauth/scopes.ts'
import { orgClaim } from '../orgs/index.ts'

type UserinfoDeps = PresentedTokenDeps & { tokens: TokenService }

async function claims(deps: UserinfoDeps, request: FastifyRequest) {
  const { payload, holder } = await deps.tokens.userOf(deps, request)
  const { user, client } = holder
  const released = new Set(
    parseScope(payload.scope as string | undefined).flatMap((s) => CLAIMS_BY_SCOPE[s] ?? []),
  )
  const values: Record<string, unknown> = {
    name: user.name ?? undefined,
    email: user.email,
    email_verified: user.email_verified_at !== null,
    org: released.has('org') ? await orgClaim(deps.db, client, user.id) : undefined,
  }
  // the account's global DID only for first-party clients (identity-provider.md, Subject identifiers),
  // never through a delegated token, which other clients hold
  const out: Record<string, unknown> = {
    sub: payload.sub,
    ...(client.first_party && !payload.act && user.did ? { did: user.did } : {}),
  }
  for (const claim of released) if (values[claim] !== undefined) out[claim] = values[claim]
  return out
}

/** OpenID Connect Core §5.3: the claims the token's scopes release; absent claims are omitted, never null. */
export function userinfoRoutes(app: App, deps: UserinfoDeps) {
  const schema = {
    summary: 'Claims about the signed-in user, by the scopes of the access token',
    tags: ['oauth'],
  }
  app.get('/userinfo', { schema }, async (request, reply) =>
    reply.header('cache-control', 'no-store').send(await claims(deps, request)),
  )
  app.post('/userinfo', { schema }, async (request, reply) =>
    reply.header('cache-control', 'no-store').send(await claims(deps, request)),
  )
}
