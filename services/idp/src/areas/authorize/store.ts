import { type Generated, type RawBuilder, type Selectable, sql } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the authorize area. */
export interface AuthorizeTables {
  authorization_codes: {
    code_hash: Buffer
    client_id: string
    user_id: string
    sid: string
    redirect_uri: string
    scope: string[]
    nonce: string | null
    code_challenge: string
    auth_time: Date
    acr: string
    amr: string[]
    created_at: Generated<Date>
    expires_at: Date
    used_at: Date | null
    family_id: Generated<string | null>
    resource: string | null
    task_id: string | null
    dpop_jkt: string | null
    access_token_jti: Generated<string | null>
    access_token_expires_at: Generated<Date | null>
  }
  consents: {
    user_id: string
    client_id: string
    granted: string[]
    decided: string[]
    updated_at: Generated<Date>
    commitment: string | null
    purpose: string | null
    granted_at: Date | null
  }
}

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

/**
 * A code exchange in one statement, for a code that needs nothing but itself: live, the caller's,
 * with this redirect URI, this S256 challenge, bound to no DPoP key or to `jkt`, and under no task.
 * Marks it used, records what the exchange issues and runs `then` (the refresh token's insert, from
 * the `consumed` row) together, and returns the code; nothing (and no change) when any of that
 * fails, for the full path to find out why. Of two concurrent redemptions, one wins.
 */
export async function redeemCodeAtOnce(
  db: IdpDb,
  codeHash: Buffer,
  expect: {
    client_id: string
    redirect_uri: string | null
    code_challenge: string | null
    jkt: string | null
  },
  issued: { family_id: string; access_token_jti: string; access_token_expires_at: Date },
  then: RawBuilder<unknown>,
) {
  const now = new Date()
  const query = sql<Selectable<CodeRow>>`with consumed as (
      update authorization_codes set used_at = ${now}::timestamptz,
        family_id = case when 'offline_access' = any(scope) then ${issued.family_id}::text end,
        access_token_jti = ${issued.access_token_jti}::text,
        access_token_expires_at = ${issued.access_token_expires_at}::timestamptz
      where code_hash = ${codeHash}::bytea and used_at is null and expires_at > ${now}::timestamptz
        and client_id = ${expect.client_id}::text and redirect_uri = ${expect.redirect_uri}::text
        and code_challenge = ${expect.code_challenge}::text
        and (dpop_jkt is null or dpop_jkt = ${expect.jkt}::text) and task_id is null
      returning *
    ), saved as (${then})
    select * from consumed`
  const { rows } = await query.execute(db)
  return rows[0]
}

/** What a code's exchange issued: its refresh family and its access token, to revoke on a replay. */
export async function codeExchange(db: IdpDb, codeHash: Buffer) {
  return db
    .selectFrom('authorization_codes')
    .select(['family_id', 'used_at', 'access_token_jti', 'access_token_expires_at'])
    .where('code_hash', '=', codeHash)
    .executeTakeFirst()
}

export async function recordCodeExchange(
  db: IdpDb,
  codeHash: Buffer,
  issued: {
    family_id: string | null
    access_token_jti: string
    access_token_expires_at: Date
  },
) {
  await db.updateTable('authorization_codes').set(issued).where('code_hash', '=', codeHash).execute()
}

/** The clients that redeemed a code in this session (to tell when it ends). */
export async function clientIdsOfSession(db: IdpDb, sid: string) {
  const rows = await db
    .selectFrom('authorization_codes')
    .select('client_id')
    .distinct()
    .where('sid', '=', sid)
    .where('used_at', 'is not', null)
    .execute()
  return rows.map((row) => row.client_id)
}

/** The clients the user consented to or redeemed a code at (they know the user). */
export async function clientIdsOfUser(db: IdpDb, userId: string) {
  const rows = await db
    .selectFrom('consents')
    .select('client_id')
    .where('user_id', '=', userId)
    .union(
      db
        .selectFrom('authorization_codes')
        .select('client_id')
        .where('user_id', '=', userId)
        .where('used_at', 'is not', null),
    )
    .execute()
  return rows.map((row) => row.client_id)
}

/** The first-party apps the user signed in to (a code redeemed), with the last time, newest first. */
export async function firstPartyAppsOf(db: IdpDb, userId: string) {
  return db
    .selectFrom('authorization_codes')
    .innerJoin('clients', 'clients.client_id', 'authorization_codes.client_id')
    .select(['clients.client_id', 'clients.client_name'])
    .select((eb) => eb.fn.max('authorization_codes.used_at').as('last_used_at'))
    .where('authorization_codes.user_id', '=', userId)
    .where('authorization_codes.used_at', 'is not', null)
    .where('clients.first_party', '=', true)
    .where('clients.deleted_at', 'is', null)
    .groupBy(['clients.client_id', 'clients.client_name'])
    .orderBy('last_used_at', 'desc')
    .execute()
}
