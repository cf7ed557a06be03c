import type { Generated } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the token area. */
export interface TokenTables {
  refresh_tokens: {
    token_hash: Buffer
    family_id: string
    client_id: string
    user_id: string
    sid: string
    scope: string[]
    auth_time: Date
    acr: string
    amr: string[]
    created_at: Generated<Date>
    expires_at: Date
    rotated_at: Date | null
    revoked_at: Date | null
    resource: string | null
    dpop_jkt: string | null
    task_id: string | null
  }
}

export type RefreshRow = IdpTables['refresh_tokens']

export async function insertRefresh(
  db: IdpDb,
  row: Omit<RefreshRow, 'created_at' | 'rotated_at' | 'revoked_at'>,
) {
  await db.insertInto('refresh_tokens').values(row).execute()
}

/** Marks a live token rotated and returns it, atomically: of two concurrent uses, one wins. */
export async function rotateRefresh(db: IdpDb, tokenHash: Buffer) {
  return db
    .updateTable('refresh_tokens')
    .set({ rotated_at: new Date() })
    .where('token_hash', '=', tokenHash)
    .where('rotated_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returningAll()
    .executeTakeFirst()
}

export async function refreshByHash(db: IdpDb, tokenHash: Buffer) {
  return db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
}

export async function revokeFamily(db: IdpDb, familyId: string) {
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: new Date() })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute()
}

/** Ends every refresh family an account holds at one client (consent withdrawn). */
export async function revokeClientFamilies(db: IdpDb, userId: string, clientId: string) {
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: new Date() })
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .execute()
}

/** Every refresh token of the user, of every client: after a credential change, none survives. */
export async function revokeUserFamilies(db: IdpDb, userId: string) {
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: new Date() })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute()
}

/** The clients that hold or held a refresh family of the user (they know the user). */
export async function clientIdsOfUser(db: IdpDb, userId: string) {
  const rows = await db
    .selectFrom('refresh_tokens')
    .select('client_id')
    .distinct()
    .where('user_id', '=', userId)
    .execute()
  return rows.map((row) => row.client_id)
}
