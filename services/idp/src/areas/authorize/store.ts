import type { IdpDb, IdpTables } from '../../db.ts'

export type CodeRow = IdpTables['authorization_codes']

export async function insertCode(
  db: IdpDb,
  row: Omit<CodeRow, 'created_at' | 'used_at' | 'family_id' | 'access_token_jti' | 'access_token_expires_at'>,
) {
  await db.insertInto('authorization_codes').values(row).execute()
}

/** Marks a live code used and returns it, atomically: of two concurrent redemptions, one wins. */
export async function consumeCode(db: IdpDb, codeHash: Buffer) {
  return db
    .updateTable('authorization_codes')
    .set({ used_at: new Date() })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returningAll()
    .executeTakeFirst()
}
