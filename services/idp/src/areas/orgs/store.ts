import type { Selectable, Updateable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

export type OrgRow = Selectable<IdpTables['organizations']>

export async function insertOrg(
  db: IdpDb,
  row: Pick<OrgRow, 'id' | 'name' | 'contact_email' | 'api_key_hash' | 'did' | 'key_sealed'>,
) {
  return db.insertInto('organizations').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function orgByKeyHash(db: IdpDb, keyHash: Buffer) {
  return db.selectFrom('organizations').selectAll().where('api_key_hash', '=', keyHash).executeTakeFirst()
}

export async function orgById(db: IdpDb, id: string) {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The organization's row, locked until the transaction ends: its quota is checked against it. */
export async function lockOrg(db: IdpDb, id: string) {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow()
}

export async function listOrgs(db: IdpDb) {
  return db.selectFrom('organizations').selectAll().orderBy('created_at').execute()
}

export async function updateOrg(db: IdpDb, id: string, set: Updateable<IdpTables['organizations']>) {
  return db
    .updateTable('organizations')
    .set({ ...set, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}

export async function countClients(db: IdpDb, organizationId: string) {
  const { count } = await db
    .selectFrom('clients')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('organization_id', '=', organizationId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(count)
}
