import type { IdpDb, IdpTables } from '../../db.ts'

export type ClientRow = IdpTables['clients']

const PUBLIC_COLUMNS = [
  'client_id',
  'client_name',
  'client_type',
  'first_party',
  'subject_type',
  'token_endpoint_auth_method',
  'redirect_uris',
  'post_logout_redirect_uris',
  'allowed_origins',
  'backchannel_logout_uri',
  'frontchannel_logout_uri',
  'created_at',
  'updated_at',
] as const

export async function insertClient(db: IdpDb, row: Omit<ClientRow, 'created_at' | 'updated_at'>) {
  return db.insertInto('clients').values(row).returning(PUBLIC_COLUMNS).executeTakeFirstOrThrow()
}

export async function clientById(db: IdpDb, clientId: string) {
  return db.selectFrom('clients').select(PUBLIC_COLUMNS).where('client_id', '=', clientId).executeTakeFirst()
}

export async function listClients(db: IdpDb) {
  return db.selectFrom('clients').select(PUBLIC_COLUMNS).orderBy('created_at').execute()
}

/** The whole row, as client authentication needs it (read through cache.ts). */
export async function clientRow(db: IdpDb, clientId: string) {
  return db.selectFrom('clients').selectAll().where('client_id', '=', clientId).executeTakeFirst()
}

export async function secretsOf(db: IdpDb, clientId: string) {
  return db
    .selectFrom('clients')
    .select(['client_type', 'client_secret_hash', 'webhook_secret_sealed'])
    .where('client_id', '=', clientId)
    .executeTakeFirst()
}

/** Once this commits, the caller calls forgetClients (cache.ts): a kept row has the old secret. */
export async function updateSecrets(
  db: IdpDb,
  clientId: string,
  set: { client_secret_hash?: Buffer; webhook_secret_sealed?: Buffer },
): Promise<boolean> {
  const result = await db
    .updateTable('clients')
    .set({ ...set, updated_at: new Date() })
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}
