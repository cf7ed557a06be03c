import type { IdpDb } from '../../db.ts'

/** The hold on an account, locked until the transaction ends. */
export const holdFor = (trx: IdpDb, userId: string) =>
  trx.selectFrom('retention_holds').selectAll().where('user_id', '=', userId).forUpdate().executeTakeFirst()

export const placeHoldRow = (trx: IdpDb, userId: string, reason: string) =>
  trx
    .insertInto('retention_holds')
    .values({ user_id: userId, reason })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ reason }))
    .returningAll()
    .executeTakeFirstOrThrow()

export const removeHold = (trx: IdpDb, userId: string) =>
  trx.deleteFrom('retention_holds').where('user_id', '=', userId).returningAll().executeTakeFirst()

export const markDeletionRequested = (trx: IdpDb, userId: string) =>
  trx
    .updateTable('retention_holds')
    .set({ deletion_requested_at: new Date() })
    .where('user_id', '=', userId)
    .execute()

export const holdRow = (db: IdpDb, userId: string) =>
  db.selectFrom('retention_holds').selectAll().where('user_id', '=', userId).executeTakeFirst()
