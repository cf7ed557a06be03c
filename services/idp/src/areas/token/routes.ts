import { type App, type Kv, rateLimit } from '@svc/kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { currentNonce, type DpopDeps, tokenEndpointProof } from '../../oauth/dpop.ts'
import { ClientAuthFields, formOnly } from '../../oauth/form.ts'
import { authenticateClient } from '../../oauth/client-auth.ts'
import type { ScreeningDeps } from '../orgs/screening.ts'
import { orgById } from '../orgs/store.ts'
import { clientCredentialsGrant } from './client-credentials.ts'
import { TOKEN_EXCHANGE, tokenExchangeGrant } from './exchange.ts'
import { authorizationCodeGrant, type GrantDeps, refreshTokenGrant } from './grants.ts'
import { DEVICE_CODE, deviceCodeGrant } from './device-code.ts'
import { PRE_AUTHORIZED_CODE, preAuthorizedCodeGrant } from './pre-authorized-code.ts'
import { idpError } from '../../errors.ts'

// RFC 6749 §3.2: unknown parameters are ignored, so the body is not closed; repeated ones fail validation.
const TokenRequest = Type.Object({
  grant_type: Type.String({ maxLength: 200 }),
  code: Type.Optional(Type.String({ maxLength: 200 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
  code_verifier: Type.Optional(Type.String({ maxLength: 200 })),
  device_code: Type.Optional(Type.String({ maxLength: 200 })),
  refresh_token: Type.Optional(Type.String({ maxLength: 200 })),
  scope: Type.Optional(Type.String({ maxLength: 1000 })),
  audience: Type.Optional(Type.String({ maxLength: 200 })),
  resource: Type.Optional(Type.String({ maxLength: 2000 })),
  subject_token: Type.Optional(Type.String({ maxLength: 8000 })),
  subject_token_type: Type.Optional(Type.String({ maxLength: 200 })),
  actor_token: Type.Optional(Type.String({ maxLength: 8000 })),
  actor_token_type: Type.Optional(Type.String({ maxLength: 200 })),
  requested_token_type: Type.Optional(Type.String({ maxLength: 200 })),
  'pre-authorized_code': Type.Optional(Type.String({ maxLength: 200 })),
  tx_code: Type.Optional(Type.String({ maxLength: 100 })),
  ...ClientAuthFields,
})

export function tokenRoutes(
  app: App,
  deps: GrantDeps & {
    kv: Kv
    dpop: DpopDeps
    screening: ScreeningDeps
    ratePerMinute: { client: number; ip: number }
  },
) {
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

  // identity-provider.md, Organization: token_rate_limit_per_min across all its clients, Retry-After 60
  const perOrganization = async (organizationId: string, request: FastifyRequest, reply: FastifyReply) => {
    const org = await orgById(deps.db, organizationId)
    const limit = org?.token_rate_limit_per_min ?? 0
    const options = { limit, windowMs: 60_000, key: () => organizationId, retryAfterS: 60 }
    await rateLimit(deps.kv, 'token-org', options, 'slow_down')(request, reply)
  }

  app.post(
    '/token',
    {
      preValidation: formOnly('token'),
      schema: {
        summary:
          'The token endpoint (RFC 6749 §3.2): authorization_code with PKCE, refresh_token with rotation, client_credentials, token exchange (RFC 8693), device_code (RFC 8628), pre-authorized_code (OpenID4VCI)',
        tags: ['oauth'],
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenRequest,
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      const body = request.body
      await perIp(request, reply)
      // OpenID4VCI §6.1: wallets redeem offers anonymously, naming themselves at most
      if (body.grant_type === PRE_AUTHORIZED_CODE) {
        if (request.headers.authorization || body.client_secret || body.client_assertion)
          throw idpError(
            'invalid_request',
            'the pre-authorized code grant takes no client authentication: send client_id alone, or nothing',
          )
        const jkt = await tokenEndpointProof(deps.dpop, request)
        if (jkt) reply.header('dpop-nonce', currentNonce(deps.dpop))
        return preAuthorizedCodeGrant(deps, body, jkt)
      }
      const client = await authenticateClient(deps, request, body)
      await perClient(client.client_id)(request, reply)
      if (client.organization_id) await perOrganization(client.organization_id, request, reply)
      const jkt = await tokenEndpointProof(deps.dpop, request)
      if (jkt) reply.header('dpop-nonce', currentNonce(deps.dpop))
      if (body.grant_type === DEVICE_CODE) return deviceCodeGrant(deps, client, body, jkt)
      if (body.grant_type === 'authorization_code') return authorizationCodeGrant(deps, client, body, jkt)
      if (body.grant_type === 'refresh_token') return refreshTokenGrant(deps, client, body, jkt)
      if (body.grant_type === 'client_credentials') return clientCredentialsGrant(deps, client, body, jkt)
      if (body.grant_type === TOKEN_EXCHANGE) return tokenExchangeGrant(deps, client, body, jkt)
      throw idpError('unsupported_grant_type', `grant_type ${body.grant_type} is not supported`)
    },
  )
}
