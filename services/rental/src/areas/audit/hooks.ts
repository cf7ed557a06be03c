import type { App } from '@svc/kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { RentalContext } from '../../context.ts'
import { type Actor, actorOfRequest, type EventService } from '../events/index.ts'
import type { OrgService } from '../orgs/index.ts'
import { answerOf, jsonRpcCall, paramsOf, REQUEST_EVENT, requestData, rpcSubjects } from './record.ts'

interface Recorded {
  orgId: string | null
  actor: Actor
  subjects: Record<string, string>
  data: ReturnType<typeof requestData>
}

/**
 * The request record: after each S+C call and each mutating A2A call is answered, one
 * `request.answered` event (actor, IP, request id, method, route, outcome, error code, duration).
 * Written after the response, outside the request's transactions (the records of answers that
 * end together in one insert): it never delays nor breaks an answer (a failure is logged), and
 * the change's own event, written in its transaction, stays the atomic record.
 */
export function auditHooks(app: App, ctx: RentalContext, use: { events: EventService; orgs: OrgService }) {
  const pending = new Set<Promise<void>>()
  app.decorateRequest('auditCaller', null)
  app.decorateRequest('auditAnswer', null)

  // every S+C route (the session's CSRF check among its onRequest hooks) is recorded
  app.addHook('onRoute', (route) => {
    const hooks = [route.onRequest ?? []].flat()
    if (hooks.includes(ctx.sessions.requireCsrf)) route.config = { ...route.config, audited: true }
  })

  // what the answer says (its error code), read from the payload before it is serialized
  app.addHook('preSerialization', (request: FastifyRequest, _reply, payload: unknown, done) => {
    if (request.routeOptions.config?.audited || request.auditCaller) request.auditAnswer = answerOf(payload)
    done(null, payload)
  })

  /** Writes the record once it is made, as its own insert; tracked until written (closing waits). */
  const write = (request: FastifyRequest, made: Promise<Recorded | null>) => {
    const written = made
      .then(async (entry) => {
        if (!entry) return
        // with the records of answers that end meanwhile, in one insert
        await use.events.recordApart({
          orgId: entry.orgId,
          type: REQUEST_EVENT,
          subjects: entry.subjects,
          actor: entry.actor,
          data: entry.data,
        })
      })
      .catch((err: Error) =>
        ctx.log.warn({ err: err.message, request_id: request.id }, 'the audit record of a request is lost'),
      )
      .finally(() => pending.delete(written))
    pending.add(written)
  }

  /** The record of a session's S+C call; a call without a live session (401) has no actor and none. */
  const sessionCall = async (request: FastifyRequest, reply: FastifyReply): Promise<Recorded | null> => {
    const session = request.consoleSession
    if (!session) return null
    // the membership is loaded after the CSRF check: a call refused by it looks its organization up
    const orgId = request.membership?.orgId ?? (await use.orgs.orgIdOf(session.subject))
    return {
      orgId,
      actor: actorOfRequest(request),
      subjects: {},
      data: requestData(request, reply, { params: paramsOf(request) }),
    }
  }

  /** The record of an A2A call, when its method changes something (reads are not recorded). */
  const rpcCall = (request: FastifyRequest, reply: FastifyReply): Recorded | null => {
    const caller = request.auditCaller!
    const call = caller.jsonRpc ? jsonRpcCall(request.body) : null
    if (caller.jsonRpc && !call) return null
    return {
      orgId: caller.orgId,
      actor: caller.actor,
      subjects: call ? rpcSubjects(call, request.auditAnswer) : {},
      data: requestData(request, reply, call ? { rpcMethod: call.method } : { params: paramsOf(request) }),
    }
  }

  app.addHook('onResponse', (request, reply, done) => {
    done()
    if (!request.routeOptions.config?.audited && !request.auditCaller) return
    // a caller the route named (an A2A token, a /v1 organization key) is recorded as itself
    write(
      request,
      request.auditCaller
        ? Promise.resolve().then(() => rpcCall(request, reply))
        : sessionCall(request, reply),
    )
  })

  // what is still being written is written before the database closes
  app.addHook('onClose', async () => {
    await Promise.allSettled([...pending])
  })
}
