import { randomBytes } from 'node:crypto'
import { AppError } from '@svc/kit'
import type { AccountsService } from '../accounts/index.ts'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { type IdpDb, inTransaction } from '../../db.ts'
import { recordEvent } from '../accounts/index.ts'
import { decideConsent } from '../authorize/index.ts'
import { checkScope } from '../authorize/index.ts'
import type { Session } from '../sessions/index.ts'
import {
  clientIdsOfSession,
  clientIdsOfUser,
  consumeApproved,
  decideDeviceCode,
  digest,
  insertDeviceCode,
  lockDeviceCode,
  pendingByUserCode,
  recordPoll,
} from './store.ts'
import { displayUserCode, newUserCode, normaliseUserCode } from './user-code.ts'
import { idpError } from '../../errors.ts'

/**
 * identity-provider.md, Limits: a device code lives 600 s and is polled every 5 s at most
 * (`IDP_DEVICE_INTERVAL_S`, shorter in tests that sign in by the device grant).
 */
export const DEVICE_CODE_TTL_S = 600
export const POLL_INTERVAL_S = 5

export interface DeviceDeps {
  db: IdpDb
  issuer: string
  receipts: ReceiptWriter
  accounts: AccountsService
  now: () => Date
  /** Seconds between two polls of a device code (`IDP_DEVICE_INTERVAL_S`, 5 by default). */
  intervalS?: number
}

/** RFC 8628 §3.1–3.2: a device code for the client (only its hash kept) and a user code for its user. */
export async function authorizeDevice(
  { db, issuer, now, intervalS = POLL_INTERVAL_S }: DeviceDeps,
  clientId: string,
  body: { scope?: string; resource?: string },
) {
  const checked = await checkScope(db, body.scope, body.resource)
  if ('error' in checked) throw new AppError(400, checked.error, checked.description)
  const deviceCode = randomBytes(32).toString('base64url')
  let userCode = newUserCode()
  // a user code names one request: draw again in the rare case it is taken
  for (let attempt = 1; ; attempt++) {
    const inserted = await insertDeviceCode(db, {
      device_code_hash: digest(deviceCode),
      user_code: userCode,
      client_id: clientId,
      scope: checked.scopes,
      resource: checked.resource?.identifier ?? null,
      interval_s: intervalS,
      expires_at: new Date(now().getTime() + DEVICE_CODE_TTL_S * 1000),
    })
    if (inserted) break
    if (attempt === 3) throw idpError('temporarily_unavailable', 'no user code is free: try again')
    userCode = newUserCode()
  }
  return {
    device_code: deviceCode,
    user_code: displayUserCode(userCode),
    ...verificationUris(issuer, userCode),
    expires_in: DEVICE_CODE_TTL_S,
    interval: intervalS,
  }
}

/** Where the user goes (RFC 8628 §3.2), with the code filled in, and that address as a QR code. */
export function verificationUris(issuer: string, userCode: string) {
  const query = `user_code=${displayUserCode(userCode)}`
  return {
    verification_uri: `${issuer}/device`,
    verification_uri_complete: `${issuer}/device?${query}`,
    verification_uri_qr: `${issuer}/device/qr.svg?${query}`,
  }
}

/** The request a typed user code names, while the user can still answer it. */
export async function pendingRequest({ db, now }: Pick<DeviceDeps, 'db' | 'now'>, typed: string) {
  const userCode = normaliseUserCode(typed)
  return userCode ? pendingByUserCode(db, userCode, now()) : undefined
}

export type PendingRequest = NonNullable<Awaited<ReturnType<typeof pendingRequest>>>

/**
 * The user's answer. Approval records the grant with the session it was given in and, for a
 * third-party client, the consent to every scope asked, as the consent page would; false when
 * the request was answered or expired meanwhile.
 */
export async function answerDevice(
  deps: DeviceDeps,
  request: PendingRequest,
  session: Session,
  approve: boolean,
  context: { ip?: string; userAgent?: string },
) {
  if (!approve) return decideDeviceCode(deps.db, request.user_code, deps.now(), { status: 'denied' })
  if (!request.first_party) await decideConsent(deps, session.user_id, request, request.scope, request.scope)
  return inTransaction(deps.db, async (trx) => {
    const approved = await decideDeviceCode(trx, request.user_code, deps.now(), {
      status: 'approved',
      user_id: session.user_id,
      sid: session.sid,
      auth_time: session.auth_time,
      acr: session.acr,
      amr: session.amr,
    })
    if (approved) await recordEvent(trx, session.user_id, 'device_approved', context)
    return approved
  })
}

/** What the token endpoint and logout ask of device codes (in the caller's db or transaction). */
export const deviceService = {
  /** The stored hash of a device code. */
  digest,
  /** Marks an approved code of this client consumed and returns it, in one statement. */
  consumeApproved,
  /** The code, locked until the caller's transaction ends. */
  lock: lockDeviceCode,
  recordPoll,
  clientIdsOfSession,
  /** The clients that redeemed a device code of the user. */
  clientIdsOfUser,
}
