import { type App, Counter, type Kv } from '@svc/kit'
import { Type } from 'typebox'
import type { DpopDeps } from '../../oauth/dpop.ts'
import { ClientAuthFields, formOnly } from '../../oauth/form.ts'
import type { ScreeningDeps } from '../orgs/screening.ts'
import { clientCredentialsGrant } from './client-credentials.ts'
import { TOKEN_EXCHANGE, tokenExchangeGrant } from './exchange.ts'
import { authorizationCodeGrant, type GrantDeps, refreshTokenGrant } from './grants.ts'
import { DEVICE_CODE, deviceCodeGrant } from './device-code.ts'
import { PRE_AUTHORIZED_CODE, preAuthorizedCodeGrant } from './pre-authorized-code.ts'
import { runSteps, type TokenState, type TokenStep, tokenSteps } from './steps.ts'

// RFC 6749 §3.2: unknown parameters are ignored, so the body is not closed; repeated ones fail validation.
export const TokenRequest = Type.Object({
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

export type TokenDeps = GrantDeps & {
  kv: Kv
  dpop: DpopDeps
  screening: ScreeningDeps
  ratePerMinute: { client: number; ip: number }
}

export function tokenRoutes(app: App, deps: TokenDeps) {
  const steps = tokenSteps(deps)
  // Each grant type's steps, in the order they run: one rule each, shared ones written once (./steps.ts).
  // Every request first passes the per-IP limit; the grant's own rules are its last step.
  const clientSteps = [steps.authenticateClient, steps.clientLimit, steps.organizationLimit, steps.dpopProof]
  const GRANTS: Record<string, TokenStep[]> = {
    authorization_code: [...clientSteps, (t) => authorizationCodeGrant(deps, t.client!, t.body, t.jkt)],
    refresh_token: [...clientSteps, (t) => refreshTokenGrant(deps, t.client!, t.body, t.jkt)],
    client_credentials: [...clientSteps, (t) => clientCredentialsGrant(deps, t.client!, t.body, t.jkt)],
    [TOKEN_EXCHANGE]: [...clientSteps, (t) => tokenExchangeGrant(deps, t.client!, t.body, t.jkt)],
    [DEVICE_CODE]: [...clientSteps, (t) => deviceCodeGrant(deps, t.client!, t.body, t.jkt)],
    // OpenID4VCI §6.1: wallets redeem offers anonymously, naming themselves at most
    [PRE_AUTHORIZED_CODE]: [
      steps.noClientAuthentication,
      steps.dpopProof,
      (t) => preAuthorizedCodeGrant(deps, t.body, t.jkt),
    ],
  }
  // an unknown grant type still authenticates its client, so that it learns nothing before
  const UNSUPPORTED: TokenStep[] = [...clientSteps, steps.unsupportedGrantType]

  const granted = new Counter({
    name: 'idp_token_grants_total',
    help: 'Tokens issued by POST /token, by grant type',
    labelNames: ['grant_type'] as const,
    registers: [app.metrics],
  })
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
      const t: TokenState = { request, reply, body: request.body }
      await steps.ipLimit(t)
      const known = Object.hasOwn(GRANTS, t.body.grant_type)
      const answer = await runSteps(known ? GRANTS[t.body.grant_type]! : UNSUPPORTED, t)
      if (known && reply.statusCode < 400) granted.inc({ grant_type: t.body.grant_type })
      return answer
    },
  )
}
