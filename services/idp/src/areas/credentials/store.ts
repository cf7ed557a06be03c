import type { Generated } from 'kysely'
import { createHash } from 'node:crypto'
import type { Insertable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the credentials area. */
export interface CredentialsTables {
  credential_offers: {
    id: string
    code_hash: Buffer
    user_id: string
    configuration_ids: string[]
    tx_code_hash: Buffer | null
    tx_code_failures: Generated<number>
    created_at: Generated<Date>
    expires_at: Date
    redeemed_at: Date | null
  }
}

export const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest()

export async function insertOffer(db: IdpDb, row: Insertable<IdpTables['credential_offers']>) {
  await db.insertInto('credential_offers').values(row).execute()
}

/** The offer behind a pre-authorized code, locked for the rest of the caller's transaction. */
export async function lockOffer(db: IdpDb, codeHash: Buffer) {
  return db
    .selectFrom('credential_offers')
    .selectAll()
    .where('code_hash', '=', codeHash)
    .forUpdate()
    .executeTakeFirst()
}

/** Spends the offer: of two concurrent redemptions, one wins. */
export async function redeemOffer(db: IdpDb, id: string, now: Date) {
  const done = await db
    .updateTable('credential_offers')
    .set({ redeemed_at: now })
    .where('id', '=', id)
    .where('redeemed_at', 'is', null)
    .executeTakeFirst()
  return done.numUpdatedRows > 0n
}

/** Counts a wrong transaction code; returns how many there have been. */
export async function recordTxCodeFailure(db: IdpDb, id: string) {
  const row = await db
    .updateTable('credential_offers')
    .set((eb) => ({ tx_code_failures: eb('tx_code_failures', '+', 1) }))
    .where('id', '=', id)
    .returning('tx_code_failures')
    .executeTakeFirstOrThrow()
  return row.tx_code_failures
}
