import { type Generated, type RawBuilder, type Selectable, sql } from 'kysely'
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

/**
 * `insert into refresh_tokens … select … from <source>`: the refresh token made from the one row a
 * data-modifying CTE of the same statement returned (a consumed code, a rotated token), so that
 * spending what it replaces and saving it take one round trip and commit together. The source's
 * `family_id`, `client_id`, `user_id`, `sid`, `scope`, `auth_time`, `acr`, `amr` and `resource`
 * carry over; `dpop_jkt` is the source's unless given; no row when the scope lacks offline_access.
 */
export function refreshFrom(
  source: string,
  token: { token_hash: Buffer; expires_at: Date; dpop_jkt?: string | null },
): RawBuilder<unknown> {
  const jkt = token.dpop_jkt === undefined ? sql.ref('dpop_jkt') : sql`${token.dpop_jkt}::text`
  return sql`insert into refresh_tokens
      (token_hash, family_id, client_id, user_id, sid, scope, auth_time, acr, amr, resource, dpop_jkt, task_id, expires_at)
    select ${token.token_hash}::bytea, family_id, client_id, user_id, sid, scope, auth_time, acr, amr, resource,
      ${jkt}, null, ${token.expires_at}::timestamptz
    from ${sql.table(source)} where family_id is not null and 'offline_access' = any(scope)`
}

/**
 * Rotation in one statement, for a token that needs nothing but itself: live, the caller's, bound
 * to no DPoP key or to `jkt`, for no resource and under no task, asked for no scope beyond its own.
 * Marks it rotated and saves its successor together, and returns it; nothing (and no change) when
 * any of that fails, for the full path to find out why. Of two concurrent uses, one wins: the row
 * lock makes the other re-read `rotated_at`.
 */
export async function rotateAtOnce(
  db: IdpDb,
  tokenHash: Buffer,
  expect: { client_id: string; jkt: string | null; scope: string[] | null },
  successor: { token_hash: Buffer; expires_at: Date },
) {
  const now = new Date()
  const query = sql<Selectable<RefreshRow>>`with rotated as (
      update refresh_tokens set rotated_at = ${now}::timestamptz
      where token_hash = ${tokenHash}::bytea and rotated_at is null and revoked_at is null
        and expires_at > ${now}::timestamptz and client_id = ${expect.client_id}::text
        and (dpop_jkt is null or dpop_jkt = ${expect.jkt}::text) and resource is null and task_id is null
        and (${expect.scope}::text[] is null or scope @> ${expect.scope}::text[])
      returning *
    ), saved as (${refreshFrom('rotated', successor)})
    select * from rotated`
  const { rows } = await query.execute(db)
  return rows[0]
}

/** Marks a live token and returns it, atomically: of two concurrent uses, one wins. */
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
