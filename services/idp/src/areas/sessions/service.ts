import { createHash, randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { endSessionRow, insertSession, liveSession } from './store.ts'

export const SESSION_COOKIE = 'svc_session'
/** Lifetimes of sessions are ours to choose (identity-provider.md): twelve hours from sign-in. */
export const SESSION_HOURS = 12

const digest = (value: string) => createHash('sha256').update(value).digest()

export interface Session {
  sid: string
  user_id: string
  amr: string[]
  acr: string
  auth_time: Date
}

/** Starts a session: a random cookie (HttpOnly, SameSite=Lax so sign-in survives the redirect back from a client). */
export async function startSession(
  db: IdpDb,
  reply: FastifyReply,
  input: { userId: string; amr: string[]; acr: string; ip?: string; userAgent?: string; secure: boolean },
): Promise<string> {
  const token = randomBytes(32).toString('base64url')
  const sid = randomBytes(16).toString('base64url')
  const now = new Date()
  await insertSession(db, {
    id_hash: digest(token),
    sid,
    user_id: input.userId,
    amr: input.amr,
    acr: input.acr,
    auth_time: now,
    expires_at: new Date(now.getTime() + SESSION_HOURS * 3600_000),
    ip: input.ip ?? null,
    user_agent: input.userAgent?.slice(0, 300) ?? null,
  })
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: input.secure,
    path: '/',
    maxAge: SESSION_HOURS * 3600,
  })
  return sid
}

/** The live session of the request's cookie, if any. */
export async function currentSession(db: IdpDb, request: FastifyRequest): Promise<Session | undefined> {
  const token = request.cookies[SESSION_COOKIE]
  if (!token) return undefined
  return liveSession(db, digest(token))
}

export async function endSession(db: IdpDb, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const token = request.cookies[SESSION_COOKIE]
  if (token) await endSessionRow(db, digest(token))
  reply.clearCookie(SESSION_COOKIE, { path: '/' })
}
