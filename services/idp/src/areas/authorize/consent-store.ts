import type { IdpDb } from '../../db.ts'

export async function consentOf(db: IdpDb, userId: string, clientId: string) {
  const row = await db
    .selectFrom('consents')
    .select(['granted', 'decided'])
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  return row ?? { granted: [], decided: [] }
}

export async function saveConsent(
  db: IdpDb,
  userId: string,
  clientId: string,
  granted: string[],
  decided: string[],
) {
  await db
    .insertInto('consents')
    .values({ user_id: userId, client_id: clientId, granted, decided })
    .onConflict((oc) =>
      oc.columns(['user_id', 'client_id']).doUpdateSet({ granted, decided, updated_at: new Date() }),
    )
    .execute()
}
