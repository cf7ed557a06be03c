import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { LIFECYCLE_PATH } from '../auth/index.ts'
import { checkSignature, handleEvent, type IdentityDeps, parseEvent } from './service.ts'

const MAX_BODY = 64 * 1024

/**
 * `POST /webhooks/svc-id`: the idp's lifecycle events. In its own scope, whatever the content type,
 * the body stays the exact bytes (never parsed by Fastify): the signature is over them.
 */
export function identityRoutes(app: App, deps: IdentityDeps & { webhookSecret: () => string | undefined }) {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY }, (_req, body, done) =>
      done(null, body),
    )
    scope.post(
      LIFECYCLE_PATH,
      {
        schema: {
          summary:
            'The identity provider’s lifecycle events (user.deleted, user.password_changed, consent.revoked, user.email_changed), signed with X-Svc-Signature over the raw body',
          tags: ['auth'],
          consumes: ['application/json'],
          headers: Type.Object({ 'x-svc-signature': Type.Optional(Type.String({ maxLength: 200 })) }),
          response: {
            200: Type.Object(
              { event: Type.String(), handled: Type.Literal(true) },
              { additionalProperties: true },
            ),
            202: Type.Object({ event: Type.String(), handled: Type.Literal(false) }),
          },
        },
      },
      async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
        checkSignature(deps.webhookSecret(), body, request.headers['x-svc-signature'])
        const outcome = await handleEvent(deps, body, parseEvent(body))
        return reply.code(outcome.status).header('cache-control', 'no-store').send(outcome.body)
      },
    )
  })
}
