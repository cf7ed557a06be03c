import type { Generated } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The provider identity: one row, the rental's did:key and its sealed seed. */
export interface ProviderTables {
  provider_identity: { id: number; did: string; seed_sealed: Buffer; created_at: Generated<Date> }
}

/** Stores the identity unless one is stored already; answers the stored one. */
export async function keepIdentity(db: RentalDb, fresh: { did: string; seed_sealed: Buffer }) {
  await db
    .insertInto('provider_identity')
    .values({ id: 1, ...fresh })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
  return db
    .selectFrom('provider_identity')
    .select(['did', 'seed_sealed'])
    .where('id', '=', 1)
    .executeTakeFirstOrThrow()
}
