import { createHash, randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { seeDevice } from './store.ts'

export const DEVICE_COOKIE = 'svc_device'
/** Browsers cap cookie lifetimes at 400 days (RFC 6265bis). */
const DEVICE_COOKIE_DAYS = 400

/**
 * Tells whether this browser signed in to this account before: a random cookie per browser, of which
 * only a per-account hash is stored. The returned tag names the device in receipts without linking
 * it across accounts.
 */
export async function recognizeDevice(
  db: IdpDb,
  request: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  secure: boolean,
): Promise<{ isNew: boolean; tag: string }> {
  let device = request.cookies[DEVICE_COOKIE]
  if (!device || !/^[A-Za-z0-9_-]{43}$/.test(device)) device = randomBytes(32).toString('base64url')
  reply.setCookie(DEVICE_COOKIE, device, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: '/',
    maxAge: DEVICE_COOKIE_DAYS * 86_400,
  })
  const hash = createHash('sha256').update(`${userId}\n${device}`).digest()
  return { isNew: await seeDevice(db, userId, hash), tag: hash.subarray(0, 8).toString('hex') }
}
