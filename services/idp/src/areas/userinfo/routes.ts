import { type App, AppError, type Kv } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { CLAIMS_BY_SCOPE, parseScope } from '../../oauth/scopes.ts'
import { tokenHolder } from '../../oauth/token-holder.ts'
import type { SigningKeys } from '../keys/service.ts'
import { isDenied } from '../revocation/denylist.ts'

// RFC 6750 §3: a failed bearer check answers 401 with a WWW-Authenticate challenge
const invalidToken = (message: string) =>
  new AppError(401, 'invalid_token', message, {
    'www-authenticate': `Bearer error="invalid_token", error_description="${message}"`,
  })

async function claims(
  deps: { db: IdpDb; kv: Kv; keys: SigningKeys; issuer: string },
  request: FastifyRequest,
) {
  const header = request.headers.authorization
  if (!header?.startsWith('Bearer ')) throw invalidToken('a Bearer access token is required')
  let payload: Record<string, unknown>
  try {
    payload = (await deps.keys.verify(header.slice(7), { issuer: deps.issuer, typ: 'at+jwt' })).payload
  } catch {
    throw invalidToken('the access token is invalid or expired')
  }
  if (await isDenied(deps.kv, payload.jti)) throw invalidToken('the access token was revoked')
  if (typeof payload.sid !== 'string')
    throw invalidToken('this access token was issued to a client for itself: there is no user')
  const holder = await tokenHolder(deps.db, payload)
  if (!holder) throw invalidToken('the access token no longer stands for a signed-in user')
  const { user, client } = holder
  const released = new Set(
    parseScope(payload.scope as string | undefined).flatMap((s) => CLAIMS_BY_SCOPE[s] ?? []),
  )
  const values: Record<string, unknown> = {
    name: user.name ?? undefined,
    email: user.email,
    email_verified: user.email_verified_at !== null,
  }
  // the account's global DID only for first-party clients (identity-provider.md, Subject identifiers)
  const out: Record<string, unknown> = {
    sub: payload.sub,
    ...(client.first_party && user.did ? { did: user.did } : {}),
  }
  for (const claim of released) if (values[claim] !== undefined) out[claim] = values[claim]
  return out
}

/** OpenID Connect Core §5.3: the claims the token's scopes release; absent claims are omitted, never null. */
export function userinfoRoutes(app: App, deps: { db: IdpDb; kv: Kv; keys: SigningKeys; issuer: string }) {
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
