import { createHash, randomBytes } from 'node:crypto'
import { AppError } from '@svc/kit'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { type IdpDb, inTransaction } from '../../db.ts'
import type { Mailer } from '../email/mailer.ts'
import type { AuthorizeService } from '../authorize/index.ts'
import type { Lifecycle } from '../lifecycle/index.ts'
import type { MfaService } from '../mfa/index.ts'
import type { OrgsService } from '../orgs/index.ts'
import type { PasskeysService } from '../passkeys/index.ts'
import type { SessionsService } from '../sessions/index.ts'
import { emit, type SignalDeps } from '../signals/index.ts'
import type { TokenService } from '../token/index.ts'
import { hashPassword, verifyPassword } from '../accounts/index.ts'
import { holdFor, markDeletionRequested } from '../accounts/index.ts'
import { recordEvent } from '../accounts/index.ts'
import {
  disableUser,
  eraseUser,
  insertEmailChange,
  setPasswordHash,
  setVerifiedEmail,
  useEmailChange,
  userByEmail,
  userById,
} from '../accounts/index.ts'
import { idpError } from '../../errors.ts'

const EMAIL_CHANGE_TTL_MS = 24 * 3600_000
const digest = (token: string) => createHash('sha256').update(token).digest()

export interface ChangeDeps {
  db: IdpDb
  mailer: Mailer
  receipts: ReceiptWriter
  lifecycle: Lifecycle
  sessions: SessionsService
  signals: SignalDeps
  issuer: string
  /** What an account's deletion forgets, and a sign-out everywhere revokes, in the other areas. */
  authorize: AuthorizeService
  passkeys: PasskeysService
  mfa: MfaService
  orgs: OrgsService
  tokens: TokenService
}

/** Ends the user's sessions (all, or all but `keep`) and every refresh family: old credentials open nothing. */
async function signOutEverywhere(deps: ChangeDeps, trx: IdpDb, userId: string, keep?: string) {
  await deps.sessions.endAllOf(trx, userId, keep)
  await deps.tokens.revokeUserFamilies(trx, userId)
}

/**
 * A new password (from the account page with the current one, or a reset link): the other
 * sessions end, every refresh family dies, and the clients are told `user.password_changed`.
 */
export async function changePassword(
  deps: ChangeDeps,
  userId: string,
  password: string,
  via: 'account' | 'reset',
  context: { ip?: string; keepSid?: string },
) {
  const passwordHash = await hashPassword(password)
  await inTransaction(deps.db, async (trx) => {
    await setPasswordHash(trx, userId, passwordHash)
    await signOutEverywhere(deps, trx, userId, context.keepSid)
    await recordEvent(trx, userId, via === 'reset' ? 'password_reset' : 'password_changed', {
      ip: context.ip,
    })
    await deps.lifecycle.announce(trx, userId, 'user.password_changed', { via })
    await emit(
      deps.signals,
      trx,
      userId,
      'credential-change',
      await deps.lifecycle.clientsKnowing(trx, userId),
      {
        credential_type: 'password',
        change_type: 'update',
      },
    )
  })
}

export async function checkCurrentPassword(db: IdpDb, userId: string, password: string) {
  const user = await userById(db, userId)
  if (!(await verifyPassword(user?.password_hash, password)))
    throw idpError('invalid_request', 'the current password is not right')
}

/** A change of address starts with a link to the new one; nothing changes until it is followed. */
export async function requestEmailChange(deps: ChangeDeps, userId: string, email: string) {
  const token = randomBytes(32).toString('base64url')
  await inTransaction(deps.db, async (trx) => {
    await insertEmailChange(trx, {
      token_hash: digest(token),
      user_id: userId,
      new_email: email,
      expires_at: new Date(Date.now() + EMAIL_CHANGE_TTL_MS),
    })
    await deps.mailer.send(trx, {
      to: email,
      subject: 'Confirm your new email address',
      text: `Confirm this address for your account: ${deps.issuer}/ui/account/email/confirm?token=${token}\nThe link works once, for 24 hours. If you did not ask, ignore this message.`,
    })
  })
}

/** Follows the link: the address changes, verified, and the clients are told `user.email_changed`. */
export async function confirmEmailChange(deps: ChangeDeps, token: string) {
  return inTransaction(deps.db, async (trx) => {
    const change = await useEmailChange(trx, digest(token))
    if (!change) throw idpError('invalid_request', 'this link has expired or was already used')
    const owner = await userByEmail(trx, change.new_email)
    if (owner && owner.id !== change.user_id)
      throw new AppError(409, 'invalid_request', 'another account uses this address now')
    await setVerifiedEmail(trx, change.user_id, change.new_email)
    await recordEvent(trx, change.user_id, 'email_changed', {})
    const claims = { email: change.new_email, email_verified: true }
    await deps.lifecycle.announce(trx, change.user_id, 'user.email_changed', claims)
    await emit(
      deps.signals,
      trx,
      change.user_id,
      'token-claims-change',
      await deps.lifecycle.clientsKnowing(trx, change.user_id),
      {
        claims,
      },
    )
    return change.new_email
  })
}

/**
 * Deletes the account: the clients are told `user.deleted` first (while it is known who knows
 * the user), then every session, refresh family, consent, passkey, second factor and membership
 * goes, the row keeps only its id (codes and receipts name it), and `data.retention.deleted` is
 * receipted. Under a retention hold the account is only closed (signed out everywhere, disabled,
 * receipted as `data.retention.hold`, deletion deferred) and the deletion happens when the hold
 * is released.
 */
export async function deleteAccount(
  deps: ChangeDeps,
  userId: string,
  context: { ip?: string },
): Promise<'deleted' | 'deferred'> {
  return inTransaction(deps.db, async (trx) => {
    const user = (await userById(trx, userId))!
    if (await holdFor(trx, userId)) {
      await signOutEverywhere(deps, trx, userId)
      await disableUser(trx, userId)
      await markDeletionRequested(trx, userId)
      await recordEvent(trx, userId, 'account_closed_under_hold', context)
      await deps.receipts.record(trx, {
        type: 'data.retention.hold',
        subject: user.did!,
        data: { record: 'account', hold: 'deletion_deferred' },
      })
      return 'deferred'
    }
    await deps.lifecycle.announce(trx, userId, 'user.deleted')
    await emit(deps.signals, trx, userId, 'account-purged', await deps.lifecycle.clientsKnowing(trx, userId))
    await signOutEverywhere(deps, trx, userId)
    await deps.authorize.forgetUser(trx, userId)
    await deps.passkeys.forgetUser(trx, userId)
    await deps.mfa.forgetUser(trx, userId)
    await deps.orgs.forgetMember(trx, userId)
    await deps.sessions.forgetDevicesOf(trx, userId)
    await eraseUser(trx, userId)
    await recordEvent(trx, userId, 'account_deleted', context)
    await deps.receipts.record(trx, {
      type: 'data.retention.deleted',
      subject: user.did!,
      data: { record: 'account', reason: 'deleted by its owner' },
    })
    return 'deleted'
  })
}
