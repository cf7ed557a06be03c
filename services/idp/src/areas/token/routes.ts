import { createHash } from 'node:crypto'
import { AppError, type App } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import { authenticateClient } from '../../oauth/client-auth.ts'
import { verifyPkce } from '../../oauth/pkce.ts'
import { consumeCode } from '../authorize/store.ts'
import type { SigningKeys } from '../keys/service.ts'
import { issueTokens } from './tokens.ts'

const invalidGrant = (message: string) => new AppError(400, 'invalid_grant', message)

// RFC 6749 §3.2: unknown parameters are ignored, so the body is not closed; repeated ones fail validation.
const TokenRequest = Type.Object({
  grant_type: Type.String({ maxLength: 200 }),
  code: Type.Optional(Type.String({ maxLength: 200 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
  code_verifier: Type.Optional(Type.String({ maxLength: 200 })),
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
})

export function tokenRoutes(
  app: App,
  deps: { db: IdpDb; keys: SigningKeys; issuer: string; pairwiseSalt: string },
) {
  app.post(
    '/token',
    {
      schema: {
        summary: 'The token endpoint (RFC 6749 §3.2): authorization_code with PKCE',
        tags: ['oauth'],
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenRequest,
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
        throw new AppError(
          400,
          'invalid_request',
          'the token request is a form (application/x-www-form-urlencoded)',
        )
      const body = request.body
      const client = await authenticateClient(deps.db, request, body)
      if (body.grant_type !== 'authorization_code')
        throw new AppError(400, 'unsupported_grant_type', `grant_type ${body.grant_type} is not supported`)
      if (!body.code) throw new AppError(400, 'invalid_request', 'code is required')
      const code = await consumeCode(deps.db, createHash('sha256').update(body.code).digest())
      if (!code) throw invalidGrant('the code is invalid, expired or already used')
      if (code.client_id !== client.client_id) throw invalidGrant('the code was issued to another client')
      if (body.redirect_uri !== code.redirect_uri)
        throw invalidGrant('redirect_uri differs from the authorization request')
      if (!verifyPkce(body.code_verifier, code.code_challenge))
        throw invalidGrant('code_verifier does not match the code_challenge')
      return issueTokens(deps.keys, deps.issuer, deps.pairwiseSalt, client, code)
    },
  )
}
