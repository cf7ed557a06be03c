import { rowById } from '@svc/kit'
import type { Generated, Insertable, Selectable } from 'kysely'
import type { Json, RentalDb, RentalTables } from '../../db.ts'

export type KybState = 'awaiting_domain' | 'pending_review' | 'approved' | 'rejected'

/** The onboarding area's tables: the rental's idp organization key, business checks, agent screenings. */
export interface OnboardingTables {
  idp_org_keys: {
    issuer: string
    organization_id: string
    api_key_sealed: Buffer
    created_at: Generated<Date>
  }
  rental_kyb: {
    id: string
    org_id: string
    state: KybState
    domain: string
    entity_name: string
    jurisdiction: string
    registration: string
    domain_verified: boolean
    problems: Json
    attestation: string | null
    owner_document: Json | null
    publish_at: string | null
    checked_at: Date | null
    submitted_by: string | null
    reviewed_by: string | null
    reviewed_at: Date | null
    review_reason: string | null
    receipt_id: string | null
    created_at: Date
    updated_at: Date
  }
  rental_kya: {
    id: string
    org_id: string
    agent_did: string
    ok: boolean
    hits: Json
    history_count: number
    history_error: string | null
    idp_receipt: string
    screened_by: string | null
    created_at: Date
  }
}

export type KybRow = Selectable<RentalTables['rental_kyb']>
export type KyaRow = Selectable<RentalTables['rental_kya']>

/** The organization's latest business check (open or not). */
export const latestKyb = (db: RentalDb, orgId: string, lock = false) => {
  let query = db
    .selectFrom('rental_kyb')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** Whether the organization has an approved business check. */
export const hasApprovedKyb = async (db: RentalDb, orgId: string) =>
  (await db
    .selectFrom('rental_kyb')
    .select('id')
    .where('org_id', '=', orgId)
    .where('state', '=', 'approved')
    .executeTakeFirst()) !== undefined

export const kybById = (db: RentalDb, id: string, lock = false) => rowById(db, 'rental_kyb', id, { lock })

export const insertKyb = (trx: RentalDb, row: Insertable<RentalTables['rental_kyb']>) =>
  trx.insertInto('rental_kyb').values(row).execute()

export const updateKyb = (
  trx: RentalDb,
  id: string,
  changes: Partial<Insertable<RentalTables['rental_kyb']>>,
) => trx.updateTable('rental_kyb').set(changes).where('id', '=', id).execute()

export const insertKya = (trx: RentalDb, row: Insertable<RentalTables['rental_kya']>) =>
  trx.insertInto('rental_kya').values(row).execute()

/** The organization's latest agent screenings, newest first. */
export const kyaOf = (db: RentalDb, orgId: string, limit: number) =>
  db
    .selectFrom('rental_kya')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()

/** The rental's idp organization key kept for the issuer (development and tests), sealed. */
export const idpOrgKeyOf = (db: RentalDb, issuer: string) =>
  db.selectFrom('idp_org_keys').selectAll().where('issuer', '=', issuer).executeTakeFirst()

/** Keeps the key the rental signed up with at the issuer (replacing one the idp no longer knows). */
export const keepIdpOrgKey = (db: RentalDb, row: Insertable<RentalTables['idp_org_keys']>) =>
  db
    .insertInto('idp_org_keys')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('issuer')
        .doUpdateSet({ organization_id: row.organization_id, api_key_sealed: row.api_key_sealed }),
    )
    .execute()
