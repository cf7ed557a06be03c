import type { Generated, Insertable } from 'kysely'
import type { RentalDb, RentalTables } from '../../db.ts'

/** The tenant area's table: each organization's named secrets, sealed (never their plaintext). */
export interface TenantTables {
  tenant_secrets: {
    org_id: string
    name: string
    version: number
    sealed: Buffer
    created_by: string | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
}

const COLUMNS = ['name', 'version', 'created_by', 'created_at', 'updated_at'] as const

export type SecretRow = Pick<TenantTables['tenant_secrets'], 'name' | 'version' | 'created_by'> & {
  created_at: Date
  updated_at: Date
}

/** Stores a new secret as `row`, or a known one with the new sealed value at its next version. */
export const upsertSecret = (trx: RentalDb, row: Insertable<RentalTables['tenant_secrets']>) =>
  trx
    .insertInto('tenant_secrets')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['org_id', 'name']).doUpdateSet((eb) => ({
        sealed: row.sealed,
        version: eb('tenant_secrets.version', '+', 1),
        updated_at: row.updated_at,
      })),
    )
    .returning(COLUMNS)
    .executeTakeFirstOrThrow()

export const secretsOf = (db: RentalDb, orgId: string) =>
  db.selectFrom('tenant_secrets').select(COLUMNS).where('org_id', '=', orgId).orderBy('name').execute()

export const deleteSecret = (db: RentalDb, orgId: string, name: string) =>
  db.deleteFrom('tenant_secrets').where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst()

export const sealedSecret = (db: RentalDb, orgId: string, name: string) =>
  db
    .selectFrom('tenant_secrets')
    .select('sealed')
    .where('org_id', '=', orgId)
    .where('name', '=', name)
    .executeTakeFirst()
