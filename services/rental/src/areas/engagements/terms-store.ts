import { type Generated, type Insertable, type Selectable, sql } from 'kysely'
import type { Json, RentalDb, RentalTables } from '../../db.ts'

/** Tables of an engagement's terms after hire: the agents' released versions and the addenda clients signed. */
export interface TermsTables {
  agent_versions: {
    agent_did: string
    version: string
    seq: Generated<string>
    changelog: string
    card_hash: string
    provider_org_id: string
    released_by: string
    receipt_id: string
    released_at: Date
  }
  engagement_addenda: {
    engagement_id: string
    to_version: string
    org_id: string
    from_version: string | null
    card_hash: string
    body: Json
    hash: string
    signature: string
    receipt_id: string
    accepted_by: string
    accepted_at: Date
  }
}

export type VersionRow = Selectable<RentalTables['agent_versions']>
export type AddendumRow = Selectable<RentalTables['engagement_addenda']>

/** The engagement's capacity limits (null: no limit), set as a whole. */
export const setCapacity = (
  trx: RentalDb,
  id: string,
  limits: { max_concurrent_tasks: number | null; tasks_per_minute: number | null },
  at: Date,
) =>
  trx
    .updateTable('engagements')
    .set({ ...limits, capacity_updated_at: at })
    .where('id', '=', id)
    .execute()

/** The agent's latest released version (the highest: each release is above the one before), or undefined. */
export const latestVersion = (db: RentalDb, agentDid: string) =>
  db
    .selectFrom('agent_versions')
    .selectAll()
    .where('agent_did', '=', agentDid)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst()

export const versionOf = (db: RentalDb, agentDid: string, version: string) =>
  db
    .selectFrom('agent_versions')
    .selectAll()
    .where('agent_did', '=', agentDid)
    .where('version', '=', version)
    .executeTakeFirst()

/** The agent's versions, newest first (at most `limit`). */
export const versionsOf = (db: RentalDb, agentDid: string, limit: number) =>
  db
    .selectFrom('agent_versions')
    .selectAll()
    .where('agent_did', '=', agentDid)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute()

export const insertVersion = (trx: RentalDb, row: Insertable<RentalTables['agent_versions']>) =>
  trx.insertInto('agent_versions').values(row).returningAll().executeTakeFirstOrThrow()

export const insertAddendum = (trx: RentalDb, row: Insertable<RentalTables['engagement_addenda']>) =>
  trx.insertInto('engagement_addenda').values(row).execute()

/** The engagement moves to the version its addendum accepted. */
export const setAgentVersion = (trx: RentalDb, engagementId: string, version: string) =>
  trx.updateTable('engagements').set({ agent_version: version }).where('id', '=', engagementId).execute()

/** The engagement's signed addenda, oldest first. */
export const addendaOf = (db: RentalDb, engagementId: string) =>
  db
    .selectFrom('engagement_addenda')
    .selectAll()
    .where('engagement_id', '=', engagementId)
    .orderBy('accepted_at')
    .execute()

/** Serialises releases of the agent's versions until `trx` ends (a transaction-scoped advisory lock). */
export async function lockAgentVersions(trx: RentalDb, did: string) {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`agent-versions:${did}`}, 0))`.execute(trx)
}
