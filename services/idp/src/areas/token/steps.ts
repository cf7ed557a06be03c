import { rateLimit } from '@svc/kit'
import type { Selectable } from 'kysely'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Static } from 'typebox'
import { authenticateClient } from '../clients/index.ts'
import { currentNonce, tokenEndpointProof } from '../../oauth/dpop.ts'
import type { IdpTables } from '../../db.ts'
import { idpError } from '../../errors.ts'
import type { TokenDeps, TokenRequest } from './routes.ts'

/** One /token request as its steps see it: each step checks one rule and may add what it learned. */
export interface TokenState {
  request: FastifyRequest
  reply: FastifyReply
  body: Static<typeof TokenRequest>
  /** The authenticated client, after `authenticateClient`. */
  client?: Readonly<Selectable<IdpTables['clients']>>
  /** The DPoP key thumbprint, after `dpopProof` when the request carried a proof. */
  jkt?: string
}

/** A step either passes (returns nothing) or answers: the first step that returns a value ends the request. */
export type TokenStep = (t: TokenState) => Promise<unknown> | unknown

export async function runSteps(steps: TokenStep[], t: TokenState): Promise<unknown> {
  for (const step of steps) {
    const answer = await step(t)
    if (answer !== undefined) return answer
  }
  throw new Error('a /token grant ended without an answer')
}

/** The steps /token grants share, each one rule. */
export function tokenSteps(deps: TokenDeps) {
  // identity-provider.md, Limits: 60/min per IP before anything else, 30/min per authenticated client
  const perIp = rateLimit(
    deps.kv,
    'token-ip',
    { limit: deps.ratePerMinute.ip, windowMs: 60_000 },
    'slow_down',
  )
  const perClient = (clientId: string) =>
    rateLimit(
      deps.kv,
      'token-client',
      { limit: deps.ratePerMinute.client, windowMs: 60_000, key: () => clientId },
      'slow_down',
    )

  return {
    ipLimit: async (t: TokenState) => {
      await perIp(t.request, t.reply)
    },
    /** RFC 6749 §2.3: the client authenticates with its registered method. */
    authenticateClient: async (t: TokenState) => {
      t.client = await authenticateClient(deps, t.request, t.body)
    },
    clientLimit: async (t: TokenState) => {
      await perClient(t.client!.client_id)(t.request, t.reply)
    },
    // identity-provider.md, Organization: token_rate_limit_per_min across all its clients, Retry-After 60
    organizationLimit: async (t: TokenState) => {
      const organizationId = t.client!.organization_id
      if (!organizationId) return
      const org = await deps.orgs.byId(deps.db, organizationId)
      const limit = org?.token_rate_limit_per_min ?? 0
      const options = { limit, windowMs: 60_000, key: () => organizationId, retryAfterS: 60 }
      await rateLimit(deps.kv, 'token-org', options, 'slow_down')(t.request, t.reply)
    },
    /** RFC 9449 §5: a DPoP proof, when sent, binds the tokens; the answer carries the next nonce. */
    dpopProof: async (t: TokenState) => {
      const jkt = await tokenEndpointProof(deps.dpop, t.request)
      if (jkt) {
        t.jkt = jkt
        t.reply.header('dpop-nonce', currentNonce(deps.dpop))
      }
    },
    /** OpenID4VCI §6.1: the pre-authorized code grant takes no client authentication. */
    noClientAuthentication: (t: TokenState) => {
      if (t.request.headers.authorization || t.body.client_secret || t.body.client_assertion)
        throw idpError(
          'invalid_request',
          'the pre-authorized code grant takes no client authentication: send client_id alone, or nothing',
        )
    },
    unsupportedGrantType: (t: TokenState) => {
      throw idpError('unsupported_grant_type', `grant_type ${t.body.grant_type} is not supported`)
    },
  }
}
