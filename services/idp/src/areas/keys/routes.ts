import type { App, rateLimit } from '@svc/kit'
import { Type } from 'typebox'
import { requireAdmin } from '../../admin.ts'
import { ALGORITHMS, type SigningKeys } from './service.ts'

const Jwk = Type.Object(
  { kty: Type.String(), kid: Type.String(), alg: Type.String(), use: Type.String() },
  { additionalProperties: Type.String() },
)

export function keyRoutes(
  app: App,
  keys: SigningKeys,
  adminToken: string,
  discoveryLimit: ReturnType<typeof rateLimit>,
) {
  // the admin token is checked before anything else about the request
  const admin = {
    onRequest: async (request: Parameters<typeof requireAdmin>[0]) => requireAdmin(request, adminToken),
  }

  app.get(
    '/.well-known/jwks.json',
    {
      onRequest: discoveryLimit,
      schema: {
        summary: 'The issuer’s public keys: signing, about to sign, and retired but unexpired',
        tags: ['discovery'],
        response: { 200: Type.Object({ keys: Type.Array(Jwk) }) },
      },
    },
    async (_request, reply) =>
      reply
        .header('cache-control', 'public, max-age=300')
        .send((await keys.jwks()) as { keys: Array<{ kty: string; kid: string; alg: string; use: string }> }),
  )

  app.get(
    '/manage/v1/keys',
    { ...admin, schema: { summary: 'Signing keys and their states', tags: ['management'] } },
    async () => ({ keys: await keys.list() }),
  )

  app.post(
    '/manage/v1/keys/rotate',
    {
      ...admin,
      // an empty POST rotates every algorithm
      preValidation: async (request) => {
        request.body ??= {}
      },
      schema: {
        summary:
          'Rotate signing keys: the successor is published first, unless immediate (a compromised key)',
        tags: ['management'],
        body: Type.Object(
          {
            alg: Type.Optional(Type.Union(ALGORITHMS.map((a) => Type.Literal(a)))),
            immediate: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => ({ rotated: await keys.rotate(request.body) }),
  )
}
