import { randomBytes } from 'node:crypto'
import type { Kv } from '@svc/kit'
import type { FastifyReply, FastifyRequest } from 'fastify'

export const MFA_COOKIE = 'svc_mfa'
const TTL_MS = 5 * 60_000
const MAX_TRIES = 5

interface Pending {
  userId: string
  returnTo: string
}

/** A password was right and a second factor is due: remember who, for five minutes, behind an HttpOnly cookie. */
export async function beginSecondFactor(kv: Kv, reply: FastifyReply, pending: Pending, secure: boolean) {
  const id = randomBytes(24).toString('base64url')
  await kv.set(`mfa:${id}`, JSON.stringify(pending), TTL_MS)
  reply.setCookie(MFA_COOKIE, id, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: '/ui/mfa',
    maxAge: TTL_MS / 1000,
  })
}

export async function pendingOf(
  kv: Kv,
  request: FastifyRequest,
): Promise<(Pending & { id: string }) | undefined> {
  const id = request.cookies[MFA_COOKIE]
  const stored = id ? await kv.get(`mfa:${id}`) : null
  return stored && id ? { ...(JSON.parse(stored) as Pending), id } : undefined
}

/** Counts a wrong code; after five, the password must be entered again. */
export async function failSecondFactor(kv: Kv, id: string): Promise<boolean> {
  const tries = await kv.increment(`mfa-tries:${id}`, TTL_MS)
  if (tries < MAX_TRIES) return false
  await kv.delete(`mfa:${id}`)
  return true
}

export async function endSecondFactor(kv: Kv, reply: FastifyReply, id: string) {
  await kv.delete(`mfa:${id}`)
  reply.clearCookie(MFA_COOKIE, { path: '/ui/mfa' })
}
