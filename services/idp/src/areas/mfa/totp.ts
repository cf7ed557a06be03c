import type { Sealer } from '@svc/kit'
import { Secret, TOTP } from 'otpauth'
import type { IdpDb } from '../../db.ts'
import { acceptTotpStep, putUnconfirmedTotp, totpCredential as totpOf_ } from './store.ts'

const PERIOD = 30
const context = (userId: string) => `totp:${userId}`
const totpOf = (secret: Secret, label: string) =>
  new TOTP({ issuer: 'svc', label, algorithm: 'SHA1', digits: 6, period: PERIOD, secret })

export async function hasTotp(db: IdpDb, userId: string): Promise<boolean> {
  const row = await totpOf_(db, userId)
  return Boolean(row?.confirmed_at)
}

/** Starts (or restarts) enrolment: a new secret, unconfirmed until a code from it is entered. */
export async function beginEnrolment(db: IdpDb, sealer: Sealer, userId: string, label: string) {
  const secret = new Secret({ size: 20 })
  const sealed = sealer.seal(secret.base32, context(userId))
  await putUnconfirmedTotp(db, userId, sealed)
  return { secret: secret.base32, uri: totpOf(secret, label).toString() }
}

/**
 * Checks a code (one step of clock drift either way) and remembers its step, so the same code is
 * never accepted twice. `confirm` also completes an enrolment.
 */
export async function verifyTotp(
  db: IdpDb,
  sealer: Sealer,
  userId: string,
  code: string,
  confirm = false,
): Promise<boolean> {
  const row = await totpOf_(db, userId)
  if (!row || (!row.confirmed_at && !confirm) || !/^\d{6}$/.test(code)) return false
  const secret = Secret.fromBase32(sealer.open(row.secret_sealed, context(userId)).toString('utf8'))
  const delta = totpOf(secret, userId).validate({ token: code, window: 1 })
  if (delta === null) return false
  const step = Math.floor(Date.now() / 1000 / PERIOD) + delta
  return acceptTotpStep(db, userId, step, confirm)
}
