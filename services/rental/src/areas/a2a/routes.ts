import { AgentCard } from '@a2a-js/sdk'
import type { App } from '@svc/kit'
import { handleJsonRpc, jsonRpcEndpoint, refuseUnauthenticated } from '@svc/kit/http/a2a-jsonrpc'
import { etagOf, ifNoneMatch } from '@svc/kit/http/etag'
import { Type } from 'typebox'
import { tokenActor } from '../events/index.ts'
import type { TaskDeps } from '../tasks/service.ts'
import type { TokenService } from '../tokens/index.ts'
import { A2A_PATH, BEARER_SCHEME, INPUT_MODES, rentalCard } from './card.ts'
import { mapRentalError, TokenUser } from './caller.ts'
import { RentalA2AHandler } from './handler.ts'

const Card = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    supportedInterfaces: Type.Array(
      Type.Object({ url: Type.String(), protocolBinding: Type.String(), protocolVersion: Type.String() }),
    ),
    version: Type.String(),
  },
  { additionalProperties: true, description: 'an A2A 1.0 AgentCard' },
)

/**
 * The rental's A2A surface: its agent card (public) and the JSON-RPC endpoint (`POST /a2a`,
 * `Authorization: Bearer agt_…`), where a client's own software runs and follows tasks on that
 * client's engagements.
 */
export function a2aRoutes(
  app: App,
  deps: TaskDeps & { baseUrl: string; version: string; verifyToken: TokenService['verify'] },
) {
  const cardJson = () => rentalCard(deps.catalogue, deps.baseUrl, deps.version)
  const handler = new RentalA2AHandler(deps, async () => AgentCard.fromJSON(await cardJson()))
  const endpoint = jsonRpcEndpoint(handler, INPUT_MODES)
  const tags = ['a2a']

  for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json'])
    app.get(
      path,
      {
        schema: {
          summary: 'The rental’s A2A 1.0 agent card (agent.json is an alias)',
          tags,
          response: { 200: Card, 304: Type.Null({ description: 'not modified (If-None-Match)' }) },
        },
      },
      async (request, reply) => {
        // the card follows the catalogue, so its tag is of the body as it is now
        const body = JSON.stringify(await cardJson())
        const etag = etagOf(body)
        reply.header('etag', etag).header('cache-control', 'public, max-age=60')
        if (ifNoneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send(null)
        return reply
          .type('application/json')
          .serializer((s) => s as string)
          .send(body as never)
      },
    )

  app.register(async (scope) => {
    // the JSON-RPC body is read as text, so malformed JSON is a JSON-RPC parse error (-32700)
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body))
    scope.post(
      A2A_PATH,
      {
        schema: {
          summary: 'The rental’s A2A JSON-RPC 2.0 endpoint (Bearer agt_ token)',
          description:
            'A2A 1.0 methods SendMessage, SendStreamingMessage (SSE), GetTask, ListTasks, CancelTask, SubscribeToTask (SSE), and the 0.3 names (message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe), on the caller’s engagements. A missing, unknown, revoked or expired token is HTTP 401 with WWW-Authenticate: Bearer and a JSON-RPC error -31401; every other answer, errors included, is HTTP 200.',
          tags,
          security: [{ [BEARER_SCHEME]: [] }],
        },
      },
      async (request, reply) => {
        const header = request.headers.authorization
        const token = await deps.verifyToken(header)
        if (!token) {
          const given = typeof header === 'string' && header.trim() !== ''
          return refuseUnauthenticated(request, reply, {
            realm: 'rental',
            tokenGiven: given,
            message: given
              ? 'the API token is unknown, revoked or expired'
              : 'an agt_ Bearer token is required',
            scheme: { bearerFormat: 'agt_' },
          })
        }
        // the audit record (areas/audit) of a mutating call: the token, its organization, the request
        request.auditCaller = { actor: tokenActor(token.id, request), orgId: token.owner, jsonRpc: true }
        return handleJsonRpc(endpoint, request, reply, {
          user: new TokenUser(token),
          mapError: mapRentalError,
        })
      },
    )
  })
}
