import type { Sealer } from '@svc/kit'
import type { Generated } from 'kysely'
import { newUserKey } from '../identity/service.ts'
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
