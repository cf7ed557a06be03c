import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { ClientAuthFields, formOnly } from '../../oauth/form.ts'
import { authenticateClient } from '../clients/index.ts'
import { introspect, revoke, type TokenDeps } from './service.ts'

const TokenForm = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 4000 }),
  token_type_hint: Type.Optional(Type.String({ maxLength: 50 })),
  ...ClientAuthFields,
})

export function revocationRoutes(app: App, deps: TokenDeps) {
  app.post(
    '/revoke',
    {
      preValidation: formOnly('revocation'),
      schema: { summary: 'RFC 7009 token revocation: always 200', tags: ['oauth'], body: TokenForm },
    },
    async (request, reply) => {
      const client = await authenticateClient(deps, request, request.body)
      await revoke(deps, client, request.body.token, request.body.token_type_hint)
      return reply.code(200).header('cache-control', 'no-store').send({})
    },
  )
  app.post(
    '/introspect',
    {
      preValidation: formOnly('introspection'),
      schema: {
        summary: 'RFC 7662 token introspection, for the token’s audience',
        tags: ['oauth'],
        body: TokenForm,
      },
    },
    async (request, reply) => {
      const client = await authenticateClient(deps, request, request.body)
      return reply
        .header('cache-control', 'no-store')
        .send(await introspect(deps, client, request.body.token))
    },
  )
}
