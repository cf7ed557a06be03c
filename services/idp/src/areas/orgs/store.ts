import type { Generated } from 'kysely'
import type { Selectable, Updateable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the orgs area. */
export interface OrgsTables {
  organizations: {
    id: string
    name: string
    contact_email: string
    api_key_hash: Buffer
    did: string
    key_sealed: Buffer
    domain: string | null
    domain_verified: Generated<boolean>
    agent_deny_list: Generated<string[]>
    require_member_mfa: Generated<boolean>
    max_clients: Generated<number>
    token_rate_limit_per_min: Generated<number>
    created_at: Generated<Date>
    updated_at: Generated<Date>
    disabled_at: Date | null
    business: { entity_name: string; jurisdiction?: string; registration?: string } | null
  }
  org_members: {
    organization_id: string
    user_id: string
    role: 'admin' | 'member'
    created_at: Generated<Date>
  }
  org_invites: {
    token_hash: Buffer
    organization_id: string
    email: string
    role: 'admin' | 'member'
    created_at: Generated<Date>
    expires_at: Date
    accepted_at: Date | null
    accepted_by: string | null
  }
}

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
