import type { Generated, Selectable, Updateable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the clients area. */
export interface ClientsTables {
  clients: {
    client_id: string
    client_name: string
    client_type: 'confidential' | 'public'
    first_party: boolean
    subject_type: 'public' | 'pairwise'
    token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none'
    jwks: { keys: Array<Record<string, unknown>> } | null
    redirect_uris: string[]
    post_logout_redirect_uris: string[]
    allowed_origins: string[]
    backchannel_logout_uri: string | null
    frontchannel_logout_uri: string | null
    /** RFC 7591 §2: the client's home page (the hosted pages' way back to it). */
    client_uri: string | null
    client_secret_hash: Buffer | null
    webhook_secret_sealed: Buffer
    created_at: Generated<Date>
    updated_at: Generated<Date>
    organization_id: string | null
    deleted_at: Date | null
    lifecycle_webhook_url: string | null
    did: string | null
    key_sealed: Buffer | null
    agent_model: { model: string; version?: string; provider?: string } | null
    workload: { scheme: 'spiffe' | 'entra'; external_id: string; issuer: string; bound_at: string } | null
  }
}

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
  'client_uri',
  'lifecycle_webhook_url',
  'did',
  'agent_model',
  'workload',
  'created_at',
  'updated_at',
] as const

export async function insertClient(
  db: IdpDb,
  row: Omit<ClientRow, 'created_at' | 'updated_at' | 'deleted_at' | 'agent_model' | 'workload'>,
) {
  return db.insertInto('clients').values(row).returning(PUBLIC_COLUMNS).executeTakeFirstOrThrow()
}

export async function clientById(db: IdpDb, clientId: string) {
  return db.selectFrom('clients').select(PUBLIC_COLUMNS).where('client_id', '=', clientId).executeTakeFirst()
}

export async function listClients(db: IdpDb) {
  return db.selectFrom('clients').select(PUBLIC_COLUMNS).orderBy('created_at').execute()
}

/** An organization's live clients, or one of them: another organization's is simply not found. */
export function clientsOf(db: IdpDb, organizationId: string) {
  return db
    .selectFrom('clients')
    .select(PUBLIC_COLUMNS)
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
}

export async function markDeleted(db: IdpDb, organizationId: string, clientId: string) {
  const result = await db
    .updateTable('clients')
    .set({ deleted_at: new Date(), updated_at: new Date() })
    .where('client_id', '=', clientId)
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** The whole row of a live client, as client authentication needs it (read through cache.ts). */
export async function clientRow(db: IdpDb, clientId: string) {
  return liveClients(db).selectAll().where('client_id', '=', clientId).executeTakeFirst()
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

/**
 * The clients that exist for the protocol endpoints: not deleted, and not of a disabled
 * organization (identity-provider.md, states table: such clients are unknown).
 */
export const liveClients = (db: IdpDb) =>
  db
    .selectFrom('clients')
    .where('clients.deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('clients.organization_id', 'is', null),
        eb(
          'clients.organization_id',
          'not in',
          eb
            .selectFrom('organizations')
            .select('organizations.id')
            .where('organizations.disabled_at', 'is not', null),
        ),
      ]),
    )

type ClientColumns = Selectable<ClientRow>
type Column = keyof ClientColumns & string

/** A live client's chosen columns, or undefined (unknown, deleted, or of a disabled organization). */
export async function liveClientById<C extends Column>(db: IdpDb, clientId: string, columns: readonly C[]) {
  const row = await liveClients(db)
    .select(columns as readonly Column[])
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  return row as Pick<ClientColumns, C> | undefined
}

/** The live client whose did:key this is, whole. */
export async function liveClientByDid(db: IdpDb, did: string) {
  return liveClients(db).selectAll().where('did', '=', did).executeTakeFirst()
}

/** The live clients among these ids, with the chosen columns. */
export async function liveClientsAmong<C extends Column>(db: IdpDb, ids: string[], columns: readonly C[]) {
  if (!ids.length) return []
  const rows = await liveClients(db)
    .select(columns as readonly Column[])
    .where('client_id', 'in', ids)
    .execute()
  return rows as Pick<ClientColumns, C>[]
}

/** Any client's chosen columns, deleted or not, or undefined. */
export async function anyClientById<C extends Column>(db: IdpDb, clientId: string, columns: readonly C[]) {
  const row = await db
    .selectFrom('clients')
    .select(columns as readonly Column[])
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  return row as Pick<ClientColumns, C> | undefined
}

/** Clients, deleted or not, by id, with the chosen columns. */
export async function anyClientsAmong<C extends Column>(db: IdpDb, ids: string[], columns: readonly C[]) {
  if (!ids.length) return []
  const rows = await db
    .selectFrom('clients')
    .select(columns as readonly Column[])
    .where('client_id', 'in', ids)
    .execute()
  return rows as Pick<ClientColumns, C>[]
}

/** Once this commits, the caller calls forgetClients (cache.ts): a kept row has the old values. */
export async function updateClient(
  db: IdpDb,
  clientId: string,
  set: Pick<
    Updateable<ClientRow>,
    'workload' | 'agent_model' | 'lifecycle_webhook_url' | 'backchannel_logout_uri'
  >,
) {
  await db
    .updateTable('clients')
    .set({ ...set, updated_at: new Date() })
    .where('client_id', '=', clientId)
    .execute()
}

export async function countLiveClientsOf(db: IdpDb, organizationId: string) {
  const { count } = await db
    .selectFrom('clients')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(count)
}

export async function clientsWithoutDid(db: IdpDb) {
  return db.selectFrom('clients').select('client_id').where('did', 'is', null).execute()
}

export async function setClientKey(db: IdpDb, clientId: string, key: { did: string; key_sealed: Buffer }) {
  await db.updateTable('clients').set(key).where('client_id', '=', clientId).execute()
}

export async function organizationClients(db: IdpDb, organizationId: string) {
  return clientsOf(db, organizationId).orderBy('created_at').execute()
}

export async function organizationClient(db: IdpDb, organizationId: string, clientId: string) {
  return clientsOf(db, organizationId).where('client_id', '=', clientId).executeTakeFirst()
}
