import { type Generated, type Insertable, sql } from 'kysely'
import type { IdpDb } from '../../db.ts'

/** The tables of the sessions area. */
export interface SessionsTables {
  sessions: {
    id_hash: Buffer
    sid: string
    user_id: string
    amr: string[]
    acr: string
    auth_time: Date
    created_at: Generated<Date>
    expires_at: Date
    ended_at: Date | null
    ip: string | null
    user_agent: string | null
  }
  known_devices: {
    user_id: string
    device_hash: Buffer
    first_seen_at: Generated<Date>
    last_seen_at: Generated<Date>
  }
}

export async function insertSession(db: IdpDb, row: Insertable<SessionsTables['sessions']>) {
  await db.insertInto('sessions').values(row).execute()
}

/** The live session whose cookie hashes to `idHash`. */
export function liveSession(db: IdpDb, idHash: Buffer) {
  return db
    .selectFrom('sessions')
    .select(['sid', 'user_id', 'amr', 'acr', 'auth_time'])
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', new Date())
    .executeTakeFirst()
}

export async function endSessionRow(db: IdpDb, idHash: Buffer) {
  await db.updateTable('sessions').set({ ended_at: new Date() }).where('id_hash', '=', idHash).execute()
}

/** Records that this device signed in to this account: true when it never had before. */
export async function seeDevice(db: IdpDb, userId: string, hash: Buffer): Promise<boolean> {
  const inserted = await db
    .insertInto('known_devices')
    .values({ user_id: userId, device_hash: hash })
    .onConflict((oc) => oc.columns(['user_id', 'device_hash']).doUpdateSet({ last_seen_at: new Date() }))
    .returning(sql<boolean>`(xmax = 0)`.as('inserted')) // true when the row was inserted, not updated
    .executeTakeFirstOrThrow()
  return inserted.inserted
}

/** Ends the account's live sessions, all or all but `keepSid`. */
export async function endSessionsOf(db: IdpDb, userId: string, keepSid?: string) {
  let sessions = db
    .updateTable('sessions')
    .set({ ended_at: new Date() })
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
  if (keepSid) sessions = sessions.where('sid', '!=', keepSid)
  await sessions.execute()
}

/** The account of a live session, by its `sid`. */
export async function liveSessionUser(db: IdpDb, sid: string) {
  return db
    .selectFrom('sessions')
    .select('user_id')
    .where('sid', '=', sid)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', new Date())
    .executeTakeFirst()
}

/** Every session of the account, oldest first, for its data export. */
export async function sessionsToExport(db: IdpDb, userId: string) {
  return db
    .selectFrom('sessions')
    .select(['sid', 'amr', 'acr', 'auth_time', 'created_at', 'expires_at', 'ended_at', 'ip', 'user_agent'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute()
}

/** The devices the account signed in from (it is being deleted). */
export async function forgetDevicesOf(db: IdpDb, userId: string) {
  await db.deleteFrom('known_devices').where('user_id', '=', userId).execute()
}

/** The account's live sessions, newest first, for the account page. */
export async function liveSessionsOf(db: IdpDb, userId: string) {
  return db
    .selectFrom('sessions')
    .select(['sid', 'user_id', 'auth_time', 'created_at', 'ip', 'user_agent'])
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', new Date())
    .orderBy('created_at', 'desc')
    .execute()
}

/** Ends one live session of the account by its `sid`: false when it was not live. */
export async function endSessionBySid(db: IdpDb, userId: string, sid: string) {
  const ended = await db
    .updateTable('sessions')
    .set({ ended_at: new Date() })
    .where('user_id', '=', userId)
    .where('sid', '=', sid)
    .where('ended_at', 'is', null)
    .executeTakeFirst()
  return ended.numUpdatedRows > 0n
}
