import type { Generated } from 'kysely'
import type { IdpDb } from '../../db.ts'

/** The tables of the mfa area. */
export interface MfaTables {
  totp_credentials: {
    user_id: string
    secret_sealed: Buffer
    confirmed_at: Date | null
    last_step: Generated<number>
  }
}

export function totpCredential(db: IdpDb, userId: string) {
  return db.selectFrom('totp_credentials').selectAll().where('user_id', '=', userId).executeTakeFirst()
}

/** Starts (or restarts) enrolment with a new sealed secret, unconfirmed. */
export async function putUnconfirmedTotp(db: IdpDb, userId: string, sealed: Buffer) {
  await db
    .insertInto('totp_credentials')
    .values({ user_id: userId, secret_sealed: sealed, confirmed_at: null })
    .onConflict((oc) =>
      oc.column('user_id').doUpdateSet({ secret_sealed: sealed, confirmed_at: null, last_step: 0 }),
    )
    .execute()
}

/** Records the step of an accepted code, only if later than the last one: a code is never used twice. */
export async function acceptTotpStep(db: IdpDb, userId: string, step: number, confirm: boolean) {
  const accepted = await db
    .updateTable('totp_credentials')
    .set({ last_step: step, ...(confirm ? { confirmed_at: new Date() } : {}) })
    .where('user_id', '=', userId)
    .where('last_step', '<', step)
    .executeTakeFirst()
  return accepted.numUpdatedRows > 0n
}

/** The account's second factor (it is being deleted). */
export async function deleteTotpOf(db: IdpDb, userId: string) {
  await db.deleteFrom('totp_credentials').where('user_id', '=', userId).execute()
}
