import { AgentCard } from '@a2a-js/sdk'
import type { App } from '@svc/kit'
import { handleJsonRpc, jsonRpcEndpoint, refuseUnauthenticated } from '@svc/kit/http/a2a-jsonrpc'
import { Type } from 'typebox'
import { mapRentalError } from '../a2a/index.ts'
import { HOP_BEARER_SCHEME, HOP_INPUT_MODES, HopUser, TeamHopA2AHandler, teamHopCard } from './a2a.ts'
import { hopOfCredential, TEAM_A2A_PATH, TEAM_CARD_PATH } from './hops.ts'
import type { TeamDeps } from './service.ts'

const bearerOf = (header: string | undefined) =>
  header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : ''

/**
 * The delegation endpoint: its A2A card (public) and its JSON-RPC endpoint, opened by a running
 * hop's credential (a missing, unknown, expired or ended one: HTTP 401, JSON-RPC -31401).
 */
export function teamHopA2aRoutes(app: App, deps: TeamDeps) {
  const cardJson = () => teamHopCard(deps.ctx.baseUrl, deps.ctx.version)
  const handler = new TeamHopA2AHandler(deps, async () => AgentCard.fromJSON(cardJson()))
  const endpoint = jsonRpcEndpoint(handler, HOP_INPUT_MODES)
  const tags = ['teams']
  app.get(
    TEAM_CARD_PATH,
    {
      schema: {
        summary: 'The A2A 1.0 agent card of the delegation endpoint team tasks’ agents delegate through',
        tags,
        response: {
          200: Type.Record(Type.String(), Type.Unknown(), { description: 'an A2A 1.0 AgentCard' }),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300')
      return cardJson()
    },
  )
  app.register(async (scope) => {
    // the JSON-RPC body is read as text, so malformed JSON is a JSON-RPC parse error (-32700)
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body))
    scope.post(
      TEAM_A2A_PATH,
      {
        schema: {
          summary:
            'A team task’s agent delegates a sub-task to a member over A2A (JSON-RPC, the hop credential)',
          description:
            'A2A 1.0 `SendMessage`: the text for the member, the member’s did:key in `message.metadata.svc_team_agent_did`, `Authorization: Bearer hop_…` (the `svc_team_token` of the agent’s own message). Authorised against the team terms, sent to the member over A2A, its signed result checked, receipted as `team.hop`; the answer is the hop as a Task: `TASK_STATE_COMPLETED` (the member’s artifact and signed result), `TASK_STATE_FAILED`, or `TASK_STATE_REJECTED` (a hop outside the terms, the rule in the status message and `metadata.svc_refusal`). `GetTask` reads a hop this credential delegated. No credential, or an unknown, expired or ended one: HTTP 401 with JSON-RPC error -31401; every other answer is HTTP 200.',
          tags,
          security: [{ [HOP_BEARER_SCHEME]: [] }],
        },
      },
      async (request, reply) => {
        const token = bearerOf(request.headers.authorization)
        const hop = token ? await hopOfCredential(deps, token) : undefined
        if (!hop)
          return refuseUnauthenticated(request, reply, {
            realm: 'rental',
            tokenGiven: token !== '',
            message: token
              ? 'the delegation credential is unknown, expired or ended'
              : 'the hop credential (svc_team_token) is required as a Bearer token',
            scheme: { bearerFormat: 'hop_' },
          })
        return handleJsonRpc(endpoint, request, reply, { user: new HopUser(hop), mapError: mapRentalError })
      },
    )
  })
}
