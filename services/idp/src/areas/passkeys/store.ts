import type { Generated } from 'kysely'
import type { IdpDb } from '../../db.ts'

/** The tables of the passkeys area. */
export interface PasskeysTables {
  passkeys: {
    id: string
    user_id: string
    public_key: Buffer
    counter: Generated<string>
    transports: Generated<string[]>
    backed_up: Generated<boolean>
    created_at: Generated<Date>
    last_used_at: Date | null
  }
}

export async function insertPasskey(
  db: IdpDb,
  row: {
    id: string
    user_id: string
    public_key: Buffer
    counter: number
    transports: string[]
    backed_up: boolean
  },
) {
  await db
    .insertInto('passkeys')
    .values({ ...row, counter: String(row.counter) })
    .execute()
}

export async function passkeyById(db: IdpDb, id: string) {
  return db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function passkeysOf(db: IdpDb, userId: string) {
  return db
    .selectFrom('passkeys')
    .select(['id', 'transports', 'created_at', 'last_used_at', 'backed_up'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute()
}

export async function hasPasskey(db: IdpDb, userId: string) {
  return Boolean(
    await db.selectFrom('passkeys').select('id').where('user_id', '=', userId).limit(1).executeTakeFirst(),
  )
}

export async function touchPasskey(db: IdpDb, id: string, counter: number) {
  await db
    .updateTable('passkeys')
    .set({ counter: String(counter), last_used_at: new Date() })
    .where('id', '=', id)
    .execute()
}

export async function deletePasskey(db: IdpDb, userId: string, id: string) {
  const deleted = await db
    .deleteFrom('passkeys')
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst()
  return deleted.numDeletedRows > 0n
}

/** Every passkey of the account (it is being deleted). */
export async function deletePasskeysOf(db: IdpDb, userId: string) {
  await db.deleteFrom('passkeys').where('user_id', '=', userId).execute()
}
