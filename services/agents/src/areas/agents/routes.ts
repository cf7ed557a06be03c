import { type App, notFound } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { handleJsonRpc, refuseUnauthenticated } from '@svc/kit/http/a2a-jsonrpc'
import { ifNoneMatch } from '@svc/kit/http/etag'
import { type Caller, type CallerVerifier, Unauthenticated } from './callers.ts'
import { directoryEntry, type RunningAgent } from './service.ts'

const Id = Type.Object({ id: Type.String({ pattern: '^[a-z][a-z0-9-]{0,40}$' }) })

const Entry = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  did: Type.String({ description: 'the did:key (Ed25519) that signs the agent’s results' }),
  card_url: Type.String(),
  skills: Type.Array(Type.String()),
})

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

export function agentRoutes(app: App, agents: Map<string, RunningAgent>, callers: CallerVerifier) {
  const find = (id: string) => {
    const agent = agents.get(id)
    if (!agent) throw notFound(`no agent ${id}`)
    return agent
  }

  app.get(
    '/agents',
    {
      schema: {
        summary: 'The built-in agents: id, DID, card URL and skills',
        tags: ['agents'],
        response: { 200: Type.Object({ agents: Type.Array(Entry) }) },
      },
    },
    async () => ({ agents: [...agents.values()].map(directoryEntry) }),
  )

  for (const path of ['/agents/:id/.well-known/agent-card.json', '/agents/:id/.well-known/agent.json'])
    app.get(
      path,
      {
        schema: {
          summary: 'The agent’s A2A 1.0 agent card (agent.json is an alias)',
          tags: ['agents'],
          params: Id,
          response: { 200: Card, 304: Type.Null({ description: 'not modified (If-None-Match)' }) },
        },
      },
      async (request, reply) => {
        const agent = find(request.params.id)
        reply.header('etag', agent.etag).header('cache-control', 'public, max-age=300')
        if (ifNoneMatch(request.headers['if-none-match'], agent.etag)) return reply.code(304).send(null)
        // sent as serialised once, so its ETag holds across requests
        return reply
          .type('application/json')
          .serializer((s) => s as string)
          .send(agent.cardBody as never)
      },
    )

  app.register(async (scope) => {
    // the JSON-RPC body is read as text, so malformed JSON is a JSON-RPC parse error (-32700)
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body))
    // the caller is authenticated before anything about the request is validated
    const authenticated = new WeakMap<FastifyRequest, Caller>()
    scope.addHook('preValidation', async (request, reply) => {
      try {
        authenticated.set(request, await callers.verify(request.headers.authorization))
      } catch (err) {
        if (!(err instanceof Unauthenticated)) throw err
        return refuseUnauthenticated(request, reply, {
          realm: 'agents',
          tokenGiven: err.tokenGiven,
          message: err.message,
          scheme: { bearerFormat: 'JWT' },
        })
      }
    })
    scope.post(
      '/agents/:id',
      {
        schema: {
          summary: 'The agent’s A2A JSON-RPC 2.0 endpoint',
          description:
            'A2A 1.0 methods SendMessage, SendStreamingMessage (SSE), GetTask, ListTasks, CancelTask, SubscribeToTask (SSE), and the 0.3 names (message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe), on the caller’s own tasks. A missing or invalid access token is HTTP 401 with WWW-Authenticate: Bearer and a JSON-RPC error -31401; the idp’s keys unreadable is 503; every other answer, errors included, is HTTP 200.',
          tags: ['agents'],
          params: Id,
          security: [{ idpBearer: [] }],
        },
      },
      async (request, reply) =>
        handleJsonRpc(find((request.params as { id: string }).id).endpoint, request, reply, {
          user: authenticated.get(request)!,
        }),
    )
  })
}
