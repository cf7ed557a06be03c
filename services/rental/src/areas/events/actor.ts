import type { FastifyRequest } from 'fastify'
import type { ActorType } from './store.ts'

/**
 * Who did it, and from where: a signed-in user (its idp subject), an `agt_` token (its id), a
 * schedule or a batch (its id), an operator, an agent (its DID) or the service itself (jobs).
 */
export interface Actor {
  type: ActorType
  id: string | null
  ip?: string | null
  requestId?: string | null
}

export const SYSTEM: Actor = { type: 'system', id: null }

/** The actor of a console request: the signed-in user, with the request's address and id. */
export function actorOfRequest(request: FastifyRequest): Actor {
  const session = request.consoleSession
  return {
    type: 'user',
    id: session?.subject ?? null,
    ip: request.ip,
    requestId: request.id,
  }
}

/**
 * The actor of an operator's action (the platform's staff, RENTAL_OPERATORS): the signed-in
 * operator's idp subject, with the request's address and id. The route checks that the client is
 * an operator (the orgs service's `isOperator`) before acting as one.
 */
export function operatorActor(request: FastifyRequest): Actor {
  return { ...actorOfRequest(request), type: 'operator' }
}

/** The actor of an A2A call: the `agt_` token, with the request's address and id. */
export const tokenActor = (tokenId: string, request?: FastifyRequest): Actor => ({
  type: 'token',
  id: tokenId,
  ip: request?.ip ?? null,
  requestId: request?.id ?? null,
})
