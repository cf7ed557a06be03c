import { type App, type Sealer } from '@svc/kit'
import { Type } from 'typebox'
import { createOrgClient, type OrgClientDeps } from './clients.ts'
import { orgKey, orgOf } from './auth.ts'
import { idpError } from '../../errors.ts'

const AuthMethod = Type.Union([
  Type.Literal('client_secret_basic'),
  Type.Literal('client_secret_post'),
  Type.Literal('private_key_jwt'),
  Type.Literal('none'),
])
// RFC 7591 §2: metadata the server does not understand is ignored, so the body is not closed
const Registration = Type.Object({
  redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { minItems: 1, maxItems: 20 }),
  client_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  token_endpoint_auth_method: Type.Optional(AuthMethod),
  jwks: Type.Optional(
    Type.Object({
      keys: Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: 10 }),
    }),
  ),
  post_logout_redirect_uris: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 20 })),
  lifecycle_webhook_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
  client_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
})

/**
 * RFC 7591 dynamic registration, for organizations (their API key as Bearer): the client is the
 * organization's, pairwise, third-party and bound to PKCE. Bad metadata is `invalid_client_metadata`,
 * a bad redirect URI `invalid_redirect_uri` (§3.2.2).
 */
export function registerRoutes(app: App, deps: OrgClientDeps & { sealer: Sealer; allowPrivate: boolean }) {
  const { db, sealer, allowPrivate } = deps
  const authed = orgKey(db)
  app.post(
    '/register',
    {
      ...authed,
      attachValidation: true,
      schema: {
        summary: 'Dynamic client registration (RFC 7591) with the organization API key',
        tags: ['organizations'],
        security: [{ organizationKey: [] }],
        body: Registration,
        // RFC 7591 §3.2.1: the client information response, the registered metadata with it
        response: {
          201: Type.Unsafe<Record<string, unknown>>(
            Type.Object(
              { client_id: Type.String(), client_secret: Type.Optional(Type.String()) },
              { additionalProperties: true },
            ),
          ),
        },
      },
    },
    async (request, reply) => {
      const org = orgOf(request)
      if (request.validationError) throw idpError('invalid_client_metadata', request.validationError.message)
      const body = request.body
      const method =
        body.token_endpoint_auth_method ?? (body.jwks ? 'private_key_jwt' : 'client_secret_basic')
      const created = await createOrgClient(
        deps,
        sealer,
        org,
        {
          client_name: body.client_name ?? 'Unnamed client',
          client_type: method === 'none' ? 'public' : 'confidential',
          token_endpoint_auth_method: method,
          redirect_uris: body.redirect_uris,
          ...(body.jwks ? { jwks: body.jwks } : {}),
          ...(body.post_logout_redirect_uris
            ? { post_logout_redirect_uris: body.post_logout_redirect_uris }
            : {}),
          ...(body.lifecycle_webhook_url ? { lifecycle_webhook_url: body.lifecycle_webhook_url } : {}),
          ...(body.client_uri ? { client_uri: body.client_uri } : {}),
        },
        allowPrivate,
      )
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({
          ...created,
          client_id_issued_at: Math.floor(Date.parse(created.created_at) / 1000),
          grant_types:
            method === 'none'
              ? ['authorization_code', 'refresh_token']
              : ['authorization_code', 'refresh_token', 'client_credentials'],
          response_types: ['code'],
        })
    },
  )
}
