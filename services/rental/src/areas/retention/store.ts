import type { Generated, Insertable, Selectable } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The retention area's tables (migration 0040). */
export interface RetentionTables {
  retention_policies: {
    org_id: string
    tasks_s: number
    files_s: number
    events_s: number
    /** erase the organization when the idp deletes its last owner (areas/identity) */
    erase_on_owner_deletion: Generated<boolean>
    updated_by: string | null
    updated_at: Date
  }
  retention_holds: {
    id: string
    org_id: string
    engagement_id: string | null
    reason_sha256: string
    placed_by_type: HolderType
    placed_by: string | null
    placed_at: Date
    receipt_id: string
    released_at: Date | null
    released_by_type: HolderType | null
    released_by: string | null
    release_reason_sha256: string | null
    release_receipt_id: string | null
  }
  retention_sweep: { id: number; job_id: string | null; last_run_at: Date | null }
}

export type HolderType = 'operator' | 'owner'
export type PolicyRow = Selectable<RetentionTables['retention_policies']>
export type HoldRow = Selectable<RetentionTables['retention_holds']>

export const policyOf = (db: RentalDb, orgId: string) =>
  db.selectFrom('retention_policies').selectAll().where('org_id', '=', orgId).executeTakeFirst()

export const upsertPolicy = (trx: RentalDb, row: Insertable<RetentionTables['retention_policies']>) =>
  trx
    .insertInto('retention_policies')
    .values(row)
    .onConflict((oc) =>
      oc.column('org_id').doUpdateSet({
        tasks_s: row.tasks_s,
        files_s: row.files_s,
        events_s: row.events_s,
        ...(row.erase_on_owner_deletion === undefined
          ? {}
          : { erase_on_owner_deletion: row.erase_on_owner_deletion }),
        updated_by: row.updated_by,
        updated_at: row.updated_at,
      }),
    )
    .execute()

export const insertHold = (trx: RentalDb, row: Insertable<RetentionTables['retention_holds']>) =>
  trx.insertInto('retention_holds').values(row).execute()

/** The hold (any organization's; `lock`: FOR UPDATE). */
export const holdById = (db: RentalDb, id: string, lock = false) => {
  const query = db.selectFrom('retention_holds').selectAll().where('id', '=', id)
  return (lock ? query.forUpdate() : query).executeTakeFirst()
}

/** The organization's holds, newest first. */
export const holdsOf = (db: RentalDb, orgId: string, limit: number) =>
  db
    .selectFrom('retention_holds')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('placed_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()

/** The organization's holds still standing. */
export const activeHolds = (db: RentalDb, orgId: string) =>
  db
    .selectFrom('retention_holds')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('released_at', 'is', null)
    .orderBy('placed_at')
    .orderBy('id')
    .execute()

/** Every hold still standing, of any organization (what the tasks' output purge leaves alone). */
export const allActiveHolds = (db: RentalDb) =>
  db
    .selectFrom('retention_holds')
    .select(['org_id', 'engagement_id'])
    .where('released_at', 'is', null)
    .execute()

export const markReleased = (
  trx: RentalDb,
  id: string,
  release: Pick<
    HoldRow,
    'released_at' | 'released_by_type' | 'released_by' | 'release_reason_sha256' | 'release_receipt_id'
  >,
) => trx.updateTable('retention_holds').set(release).where('id', '=', id).execute()

/** The sweep's row, locked: the job id of the pending run. */
export const sweepRow = (trx: RentalDb) =>
  trx.selectFrom('retention_sweep').selectAll().where('id', '=', 1).forUpdate().executeTakeFirstOrThrow()

export const setSweep = (trx: RentalDb, set: { job_id: string; last_run_at?: Date }) =>
  trx.updateTable('retention_sweep').set(set).where('id', '=', 1).execute()

export const sweepJobId = async (db: RentalDb) =>
  (await db.selectFrom('retention_sweep').select('job_id').where('id', '=', 1).executeTakeFirst())?.job_id ??
  null
