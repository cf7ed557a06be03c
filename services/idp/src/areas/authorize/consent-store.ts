import type { IdpDb } from '../../db.ts'

export async function consentOf(db: IdpDb, userId: string, clientId: string) {
  const row = await db
    .selectFrom('consents')
    .select(['granted', 'decided', 'commitment', 'purpose', 'granted_at'])
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  return row ?? { granted: [], decided: [], commitment: null, purpose: null, granted_at: null }
}

export async function saveConsent(
  db: IdpDb,
  userId: string,
  clientId: string,
  consent: {
    granted: string[]
    decided: string[]
    commitment: string | null
    purpose: string | null
    granted_at: Date | null
  },
) {
  await db
    .insertInto('consents')
    .values({ user_id: userId, client_id: clientId, ...consent })
    .onConflict((oc) =>
      oc.columns(['user_id', 'client_id']).doUpdateSet({ ...consent, updated_at: new Date() }),
    )
    .execute()
}

export async function deleteConsent(db: IdpDb, userId: string, clientId: string) {
  const deleted = await db
    .deleteFrom('consents')
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  return deleted.numDeletedRows > 0n
}

/** The third-party clients an account has consented to, for the account page. */
export async function consentsOf(db: IdpDb, userId: string) {
  return db
    .selectFrom('consents')
    .innerJoin('clients', 'clients.client_id', 'consents.client_id')
    .select([
      'consents.client_id',
      'clients.client_name',
      'consents.granted',
      'consents.granted_at',
      'consents.commitment',
    ])
    .where('consents.user_id', '=', userId)
    .orderBy('consents.updated_at', 'desc')
    .execute()
}

/** Every consent of the account (it is being deleted). */
export async function deleteConsentsOf(db: IdpDb, userId: string) {
  await db.deleteFrom('consents').where('user_id', '=', userId).execute()
}

/** The account's consents, for its data export. */
export async function consentsToExport(db: IdpDb, userId: string) {
  return db
    .selectFrom('consents')
    .select(['client_id', 'granted', 'updated_at'])
    .where('user_id', '=', userId)
    .execute()
}
