import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { recordEvent, requestContext } from './service.ts'
import { userById } from './store.ts'
import { recognizeDevice } from '../sessions/index.ts'
import { startSession } from '../sessions/index.ts'
import { sendLocalMessage } from '../../pages/layout.ts'

export interface SignInDeps {
  db: IdpDb
  receipts: ReceiptWriter
}

/**
 * The end of every sign-in (password, second factor, passkey): the session, its events, a
 * `login.new_device` receipt the first time this browser signs in to the account, the way back.
 */
export async function completeSignIn(
  { db, receipts }: SignInDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  signIn: { userId: string; amr: string[]; acr: string; returnTo: string; secure: boolean },
) {
  const context = requestContext(request)
  // every way in ends here, so a disabled account is stopped here, whatever it proved
  if ((await userById(db, signIn.userId))?.disabled_at)
    return sendLocalMessage(reply, 403, 'Account disabled', 'This account is disabled. Contact the operator.')
  await db.transaction().execute(async (trx) => {
    await startSession(trx, reply, { ...signIn, ...context })
    await recordEvent(trx, signIn.userId, 'login', context)
    const device = await recognizeDevice(trx, request, reply, signIn.userId, signIn.secure)
    if (!device.isNew) return
    await recordEvent(trx, signIn.userId, 'login.new_device', context)
    const user = await userById(trx, signIn.userId)
    await receipts.record(trx, {
      type: 'login.new_device',
      subject: user!.did!,
      data: { device: device.tag, amr: signIn.amr, acr: signIn.acr },
    })
  })
  return reply.redirect(signIn.returnTo, 303)
}
