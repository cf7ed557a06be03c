import type { Sealer } from '@svc/kit'
import type { Generated } from 'kysely'
import { newUserKey } from '../identity/index.ts'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the accounts area. */
export interface AccountsTables {
  users: {
    id: string
    email: string
    email_verified_at: Date | null
    name: string | null
    password_hash: string | null
    did: string | null
    key_sealed: Buffer | null
    created_at: Generated<Date>
    deleted_at: Date | null
    disabled_at: Date | null
  }
  security_events: {
    id: string
    user_id: string
    type: string
    ip: string | null
    user_agent: string | null
    created_at: Generated<Date>
  }
  email_changes: {
    token_hash: Buffer
    user_id: string
    new_email: string
    expires_at: Date
    used_at: Date | null
  }
  retention_holds: {
    user_id: string
    reason: string
    placed_at: Generated<Date>
    deletion_requested_at: Date | null
  }
}

export type UserRow = IdpTables['users']

export async function userByEmail(db: IdpDb, email: string) {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst()
}

export async function userById(db: IdpDb, id: string) {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function markEmailVerified(db: IdpDb, id: string) {
  await db.updateTable('users').set({ email_verified_at: new Date() }).where('id', '=', id).execute()
}

/** Passkeys only from now on (the passkeys area checks that the session proved one). */
export async function removePassword(db: IdpDb, id: string) {
  await db.updateTable('users').set({ password_hash: null }).where('id', '=', id).execute()
}

export async function insertUser(db: IdpDb, row: Omit<UserRow, 'created_at' | 'deleted_at' | 'disabled_at'>) {
  await db.insertInto('users').values(row).execute()
}

export async function insertEvent(db: IdpDb, row: Omit<IdpTables['security_events'], 'created_at'>) {
  await db.insertInto('security_events').values(row).execute()
}

/** The most recent security events of an account (the account page shows twenty). */
export async function recentEvents(db: IdpDb, userId: string, limit = 20) {
  return db
    .selectFrom('security_events')
    .select(['type', 'ip', 'user_agent', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute()
}

/** Gives a did:key to accounts created before accounts had one. */
export async function backfillUserKeys(db: IdpDb, sealer: Sealer): Promise<void> {
  const missing = await db.selectFrom('users').select('id').where('did', 'is', null).execute()
  for (const { id } of missing)
    await db.updateTable('users').set(newUserKey(sealer, id)).where('id', '=', id).execute()
}

/** Sets or clears an account's disabled mark (not a deleted one); answers the admin's view of it. */
export async function setDisabledAt(db: IdpDb, userId: string, disabledAt: Date | null) {
  return db
    .updateTable('users')
    .set({ disabled_at: disabledAt })
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .returning(['id', 'email', 'disabled_at', 'deleted_at', 'created_at'])
    .executeTakeFirst()
}

/** Disables an account not yet disabled (closed under a hold). */
export async function disableUser(db: IdpDb, userId: string) {
  await db
    .updateTable('users')
    .set({ disabled_at: new Date() })
    .where('id', '=', userId)
    .where('disabled_at', 'is', null)
    .execute()
}

export async function setPasswordHash(db: IdpDb, userId: string, passwordHash: string) {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute()
}

export async function setVerifiedEmail(db: IdpDb, userId: string, email: string) {
  await db
    .updateTable('users')
    .set({ email, email_verified_at: new Date() })
    .where('id', '=', userId)
    .execute()
}

/** What is left of a deleted account: its id (codes and receipts name it). */
export async function eraseUser(db: IdpDb, userId: string) {
  await db
    .updateTable('users')
    .set({
      email: `deleted-${userId}@invalid`,
      email_verified_at: null,
      name: null,
      password_hash: null,
      deleted_at: new Date(),
    })
    .where('id', '=', userId)
    .execute()
}

export async function insertEmailChange(
  db: IdpDb,
  row: { token_hash: Buffer; user_id: string; new_email: string; expires_at: Date },
) {
  await db.insertInto('email_changes').values(row).execute()
}

/** Marks a live email change used and returns it, in one statement: a link works once. */
export async function useEmailChange(db: IdpDb, tokenHash: Buffer) {
  return db
    .updateTable('email_changes')
    .set({ used_at: new Date() })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returning(['user_id', 'new_email'])
    .executeTakeFirst()
}

export async function eventsToExport(db: IdpDb, userId: string) {
  return db
    .selectFrom('security_events')
    .select(['type', 'ip', 'user_agent', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute()
}

/** The id of the account whose did:key this is, deleted or not. */
export async function userIdByDid(db: IdpDb, did: string) {
  return (await db.selectFrom('users').select('id').where('did', '=', did).executeTakeFirst())?.id
}

/** A live account, by id or by DID (the subject of a credential access token). */
export async function liveAccount(db: IdpDb, by: { id: string } | { did: string }) {
  return db
    .selectFrom('users')
    .select(['id', 'did', 'email', 'email_verified_at', 'name'])
    .where('id' in by ? 'id' : 'did', '=', 'id' in by ? by.id : by.did)
    .where('deleted_at', 'is', null)
    .where('disabled_at', 'is', null)
    .executeTakeFirst()
}

/** The address and name of each of these accounts. */
export async function namesOf(db: IdpDb, ids: string[]) {
  if (!ids.length) return []
  return db.selectFrom('users').select(['id', 'email', 'name']).where('id', 'in', ids).execute()
}
