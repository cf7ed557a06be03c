import type { Generated } from 'kysely'
import { sql } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the keys area. */
export interface KeysTables {
  signing_keys: {
    kid: string
    alg: 'RS256' | 'ES256' | 'EdDSA'
    public_jwk: Record<string, unknown>
    private_key_enc: Buffer
    created_at: Generated<Date>
    activates_at: Date
    retired_at: Date | null
    expires_at: Date | null
  }
}

export type KeyRow = IdpTables['signing_keys']

/** Keys still published: not expired. */
export async function publishedKeys(db: IdpDb, now: Date) {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'alg', 'public_jwk', 'created_at', 'activates_at', 'retired_at', 'expires_at'])
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('activates_at', 'desc')
    .execute()
}

/** The key that signs for an algorithm now: the newest activated, not retired. */
export async function signingKey(db: IdpDb, alg: KeyRow['alg'], now: Date) {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'alg', 'private_key_enc', 'activates_at'])
    .where('alg', '=', alg)
    .where('activates_at', '<=', now)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', now)]))
    .orderBy('activates_at', 'desc')
    .limit(1)
    .executeTakeFirst()
}

/** Keys of an algorithm not yet retired (the current one and any pending successor). */
export async function liveKeys(db: IdpDb, alg: KeyRow['alg']) {
  return db
    .selectFrom('signing_keys')
    .select(['kid', 'activates_at'])
    .where('alg', '=', alg)
    .where('retired_at', 'is', null)
    .orderBy('activates_at', 'desc')
    .execute()
}

export async function insertKey(db: IdpDb, row: Omit<KeyRow, 'created_at' | 'retired_at' | 'expires_at'>) {
  await db
    .insertInto('signing_keys')
    .values({ ...row, public_jwk: JSON.stringify(row.public_jwk) as never })
    .execute()
}

export async function retireKeys(db: IdpDb, kids: string[], retiredAt: Date, expiresAt: Date) {
  if (kids.length === 0) return
  await db
    .updateTable('signing_keys')
    .set({ retired_at: retiredAt, expires_at: expiresAt })
    .where('kid', 'in', kids)
    .execute()
}

/** Serialises rotations across instances for this transaction. */
export async function lockRotation(trx: IdpDb) {
  await sql`select pg_advisory_xact_lock(hashtext('idp:signing-keys'))`.execute(trx)
}
