import type { Insertable, Selectable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

export type ResourceRow = Selectable<IdpTables['resources']>

export async function insertResource(db: IdpDb, row: Insertable<IdpTables['resources']>) {
  return db.insertInto('resources').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function resourceById(db: IdpDb, id: string) {
  return db.selectFrom('resources').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function resourceByIdentifier(db: IdpDb, identifier: string) {
  return db.selectFrom('resources').selectAll().where('identifier', '=', identifier).executeTakeFirst()
}

export async function allResources(db: IdpDb) {
  return db.selectFrom('resources').selectAll().orderBy('created_at').execute()
}

export async function deleteResource(db: IdpDb, id: string) {
  const deleted = await db.deleteFrom('resources').where('id', '=', id).executeTakeFirst()
  return deleted.numDeletedRows > 0n
}
