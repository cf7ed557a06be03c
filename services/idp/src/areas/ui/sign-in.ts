import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { recordEvent } from '../accounts/service.ts'
import { startSession } from '../sessions/service.ts'

/** The end of every sign-in, with a password alone or with a second factor: the session, its event, the way back. */
export async function completeSignIn(
  db: IdpDb,
  request: FastifyRequest,
  reply: FastifyReply,
  signIn: { userId: string; amr: string[]; acr: string; returnTo: string; secure: boolean },
) {
  const context = {
    ip: request.ip,
    ...(typeof request.headers['user-agent'] === 'string'
      ? { userAgent: request.headers['user-agent'] }
      : {}),
  }
  await startSession(db, reply, { ...signIn, ...context })
  await recordEvent(db, signIn.userId, 'login', context)
  return reply.redirect(signIn.returnTo, 303)
}
