import { TOKEN_SCOPES } from './scopes.ts'
import type { App } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalDb } from '../../db.ts'
import { type ConsoleSessions } from '../auth/hooks.ts'
import { issueToken, revokeToken, rotateToken, setPolicy, tokensOf } from './service.ts'
import { membershipOf, orgOf, route } from '../../http/index.ts'

const Nullable = <T extends import('typebox').TSchema>(t: T) => Type.Union([t, Type.Null()])

export const ApiToken = Type.Object({
  id: Type.String(),
  label: Type.String(),
  prefix: Type.String({ description: 'the first characters of the plaintext, to recognise it' }),
  scopes: Type.Array(Type.String()),
  engagement_ids: Nullable(Type.Array(Type.String())),
  expires_at: Nullable(Type.String()),
  created_at: Type.String(),
  rotated_at: Nullable(Type.String()),
  kind: Type.Union([Type.Literal('agt'), Type.Literal('org')], {
    description: 'agt: an A2A token; org: an organization key (POST /v1/auth/keys)',
  }),
})
export const IssuedToken = Type.Object({
  ...ApiToken.properties,
  token: Type.String({ description: 'the plaintext agt_… token: shown this once' }),
})
const TokenId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })
const Scope = Type.Union(TOKEN_SCOPES.map((scope) => Type.Literal(scope)))
const EngagementId = Type.String({ minLength: 1, maxLength: 100 })

export function tokenRoutes(app: App, db: RentalDb, sessions: ConsoleSessions, maxTokens: number) {
  const tags = ['tokens']
  app.post(
    '/api/tokens',
    {
      // a new token (or a new plaintext) holds the write scope: a recent second factor
      ...route.stepUp('tokens:write'),
      schema: {
        summary: 'Issues an agt_ API token for the A2A surface; the plaintext is shown once',
        tags,
        body: Type.Object(
          { label: Type.String({ minLength: 1, maxLength: 100 }) },
          { additionalProperties: false },
        ),
        response: { 201: IssuedToken },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await issueToken(db, membershipOf(request), request.body.label, maxTokens)),
  )
  app.get(
    '/api/tokens',
    {
      ...route.session('tokens:read'),
      schema: {
        summary: 'The signed-in client’s live API tokens (never their plaintext)',
        tags,
        response: { 200: Type.Object({ tokens: Type.Array(ApiToken) }) },
      },
    },
    async (request) => ({ tokens: await tokensOf(db, orgOf(request)) }),
  )
  app.delete(
    '/api/tokens/:id',
    {
      ...route.csrf('tokens:write'),
      schema: {
        summary: 'Revokes an API token (another client’s answers 404)',
        tags,
        params: TokenId,
        response: { 200: Type.Object({ id: Type.String(), revoked: Type.Literal(true) }) },
      },
    },
    async (request) => revokeToken(db, orgOf(request), request.params.id, sessions.now()),
  )
  app.post(
    '/api/tokens/:id/policy',
    {
      // granting a write scope needs a recent second factor
      ...route.stepUp('tokens:write', (request) =>
        ((request.body as { scopes?: string[] }).scopes ?? []).some((scope) => scope.endsWith(':write')),
      ),
      schema: {
        summary: 'Sets the token’s policy: scopes, the engagements it may act on, its expiry',
        tags,
        params: TokenId,
        body: Type.Object(
          {
            scopes: Type.Optional(Type.Array(Scope, { maxItems: 20 })),
            engagement_ids: Type.Optional(Nullable(Type.Array(EngagementId, { maxItems: 100 }))),
            expires_at: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
          },
          { additionalProperties: false },
        ),
        response: { 200: ApiToken },
      },
    },
    async (request) => setPolicy(db, membershipOf(request), request.params.id, request.body, sessions.now()),
  )
  app.post(
    '/api/tokens/:id/rotate',
    {
      // a new token (or a new plaintext) holds the write scope: a recent second factor
      ...route.stepUp('tokens:write'),
      schema: {
        summary: 'A new plaintext for the token, shown once; the old one stops working at once',
        tags,
        params: TokenId,
        response: { 200: IssuedToken },
      },
    },
    async (request) => rotateToken(db, orgOf(request), request.params.id, sessions.now()),
  )
}
