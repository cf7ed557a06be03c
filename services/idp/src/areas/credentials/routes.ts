import { type App, rateLimit } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { langOf } from '../../pages/i18n.ts'
import { sendLocalPage } from '../../pages/layout.ts'
import { BATCH_SIZE, issuerMetadata } from './metadata.ts'
import { issueNonce } from './nonce.ts'
import { createOffer } from './offers.ts'
import { offerPage } from './pages.ts'
import { type CredentialDeps, credentialToken, issueCredentials } from './service.ts'
import { idpError } from '../../errors.ts'

/** OpenID4VCI §8.2; strict, and a request that breaks it is `invalid_credential_request` (§8.3.1.2). */
const CredentialRequest = Type.Object(
  {
    credential_configuration_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    credential_identifier: Type.Optional(Type.String({ maxLength: 200 })),
    proofs: Type.Optional(
      Type.Object(
        { jwt: Type.Array(Type.String({ maxLength: 8000 }), { minItems: 1, maxItems: BATCH_SIZE }) },
        { additionalProperties: false },
      ),
    ),
    credential_response_encryption: Type.Optional(Type.Object({})),
  },
  { additionalProperties: false },
)

const OfferForm = Type.Object({
  csrf: Type.String({ maxLength: 100 }),
  tx_code: Type.Optional(Type.Literal('on')),
})

export function credentialRoutes(
  app: App,
  deps: CredentialDeps & {
    origin: string
    discoveryLimit: ReturnType<typeof rateLimit>
    nonceRatePerMinute: number
  },
) {
  const metadata = issuerMetadata(deps.issuer)
  const tokens = new WeakMap<FastifyRequest, Awaited<ReturnType<typeof credentialToken>>>()
  app.get(
    '/.well-known/openid-credential-issuer',
    {
      onRequest: deps.discoveryLimit,
      schema: {
        summary:
          'Credential issuer metadata (OpenID4VCI §12.2): SvcIdentityCredential as jwt_vc_json and ldp_vc',
        tags: ['discovery'],
      },
    },
    async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(metadata),
  )

  // unauthenticated and it writes: 60 a minute per IP by default
  const noncesPerIp = rateLimit(
    deps.kv,
    'vci-nonce-ip',
    { limit: deps.nonceRatePerMinute, windowMs: 60_000 },
    'slow_down',
  )
  app.post(
    '/nonce',
    {
      onRequest: noncesPerIp,
      schema: {
        summary: 'A fresh c_nonce for credential request key proofs (OpenID4VCI §7): single use, 5 minutes',
        tags: ['credentials'],
      },
    },
    async (_request, reply) =>
      reply.header('cache-control', 'no-store').send({ c_nonce: await issueNonce(deps.kv) }),
  )

  app.post(
    '/credential',
    {
      // the access token (and its DPoP proof) before the body is parsed or validated (auth first)
      onRequest: async (request, reply) => {
        reply.header('cache-control', 'no-store')
        tokens.set(request, await credentialToken(deps, request))
      },
      attachValidation: true,
      schema: {
        summary:
          'The credential endpoint (OpenID4VCI §8): one credential per jwt key proof, with the access token of a credential offer',
        tags: ['credentials'],
        body: CredentialRequest,
      },
    },
    async (request) => {
      const token = tokens.get(request)!
      if (request.validationError)
        throw idpError('invalid_credential_request', request.validationError.message)
      return issueCredentials(deps, token, request.body ?? {})
    },
  )

  app.post(
    '/ui/credentials/offer',
    {
      ...pageHooks(deps).form('sign in to offer your credential'),
      schema: {
        summary:
          'Offer the signed-in user’s identity credential to a wallet (OpenID4VCI pre-authorized code)',
        tags: ['pages'],
        body: OfferForm,
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const offer = await createOffer(deps.db, {
        issuer: deps.issuer,
        userId: session.user_id,
        withTxCode: request.body.tx_code === 'on',
        now: deps.now(),
      })
      reply.header('cache-control', 'no-store')
      return sendLocalPage(reply, 200, 'Credential offer', await offerPage(langOf(request), offer))
    },
  )
}
