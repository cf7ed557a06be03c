import type { Generated } from 'kysely'
import type { Insertable, Selectable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the resources area. */
export interface ResourcesTables {
  resources: {
    id: string
    identifier: string
    name: string
    scopes: string[]
    mcp: boolean
    created_at: Generated<Date>
    organization_id: Generated<string | null>
  }
}

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

/** Every resource for the admin (`undefined`), or one organization's own. */
export async function allResources(db: IdpDb, organizationId?: string) {
  let query = db.selectFrom('resources').selectAll()
  if (organizationId) query = query.where('organization_id', '=', organizationId)
  return query.orderBy('created_at').execute()
}

/** Removes a resource; an organization can remove only its own. */
export async function deleteResource(db: IdpDb, id: string, organizationId?: string) {
  let query = db.deleteFrom('resources').where('id', '=', id)
  if (organizationId) query = query.where('organization_id', '=', organizationId)
  const deleted = await query.executeTakeFirst()
  return deleted.numDeletedRows > 0n
}
