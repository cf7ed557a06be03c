import type { App } from '@svc/kit'
import { type TSchema, Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import { revoke, type RevocationDeps } from './service.ts'
import { AgentParams, clientOf, route, sessionOf } from '../../http/index.ts'

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

export function revocationRoutes(app: App, deps: RevocationDeps) {
  app.post(
    '/api/agents/:did/revoke',
    {
      ...route.csrf('agents:revoke'),
      schema: {
        summary:
          'The kill switch: no new task for the agent, the client’s unfinished tasks with it failed, receipted as agent.revoked; a second revoke answers the first',
        tags: ['record'],
        params: AgentParams,
        body: Type.Object(
          { reason: Type.String({ minLength: 1, maxLength: 500 }) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            agent_did: Type.String(),
            revoked: Type.Literal(true),
            revoked_at: Type.String(),
            reason_sha256: Type.String({ description: 'hex SHA-256 of the UTF-8 reason' }),
            tasks_stopped: Type.Array(Type.String()),
            receipt: Nullable(
              Type.Object({
                id: Type.String(),
                type: Type.Literal('agent.revoked'),
                leaf_hash: Type.String(),
                ledger_index: Nullable(Type.Integer()),
              }),
            ),
          }),
        },
      },
    },
    async (request, reply) => {
      const client = clientOf(request)
      const { answer, first } = await revoke(
        deps,
        client,
        request.params.did,
        request.body.reason,
        actorOfRequest(request),
      )
      // the audit trail: the receipt on the ledger, and this line in the service log
      request.log.info(
        {
          audit: 'agent.revoked',
          subject: sessionOf(request).subject,
          org: client.orgId,
          agent_did: answer.agent_did,
          receipt: answer.receipt?.id ?? null,
          tasks_stopped: answer.tasks_stopped.length,
          first,
        },
        first ? 'agent revoked' : 'agent revoke repeated',
      )
      if (!first) reply.header('idempotent-replayed', 'true')
      return answer
    },
  )
}
