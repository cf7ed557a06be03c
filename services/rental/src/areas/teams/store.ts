import { NEWEST_FIRST, pageOfRows } from '@svc/kit'
import type { Insertable, Selectable } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'

/** The teams area's tables (migration 0044). */
export interface TeamTables {
  teams: {
    id: string
    org_id: string
    name: string
    lead_did: string
    job_id: string
    terms: Json
    terms_hash: string
    state: 'draft' | 'hired' | 'ended'
    engagement_id: string | null
    end_answer: Json | null
    created_by: string | null
    created_at: Date
    hired_at: Date | null
    ended_at: Date | null
  }
  team_hops: {
    id: string
    team_id: string
    task_id: string
    parent_id: string | null
    depth: number
    agent_did: string
    state: 'running' | 'completed' | 'failed' | 'refused'
    refusal: string | null
    error: string | null
    cost_fils: number | string
    input_sha256: string | null
    output_sha256: string | null
    agent_result: Json | null
    agent_signature: string | null
    output: Json | null
    receipt_id: string | null
    receipt_leaf_hash: string | null
    token_hash: Buffer | null
    token_expires_at: Date | null
    created_at: Date
    ended_at: Date | null
  }
}

export type TeamRow = Selectable<TeamTables['teams']>
export type HopRow = Selectable<TeamTables['team_hops']>

export const insertTeam = (db: RentalDb, row: Insertable<TeamTables['teams']>) =>
  db.insertInto('teams').values(row).execute()

export const teamOf = (db: RentalDb, orgId: string, id: string, lock = false) => {
  const q = db.selectFrom('teams').selectAll().where('org_id', '=', orgId).where('id', '=', id)
  return (lock ? q.forUpdate() : q).executeTakeFirst()
}

export const teamById = (db: RentalDb, id: string, lock = false) => {
  const q = db.selectFrom('teams').selectAll().where('id', '=', id)
  return (lock ? q.forUpdate() : q).executeTakeFirst()
}

export const teamsOf = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  pageOfRows(db, { table: 'teams', owner: ['org_id', orgId], order: NEWEST_FIRST }, { limit, offset })

export async function countTeams(db: RentalDb, orgId: string) {
  const row = await db
    .selectFrom('teams')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Hired: only from draft (false when another hire came first). */
export async function markHired(db: RentalDb, id: string, engagementId: string, at: Date) {
  const done = await db
    .updateTable('teams')
    .set({ state: 'hired', engagement_id: engagementId, hired_at: at })
    .where('id', '=', id)
    .where('state', '=', 'draft')
    .executeTakeFirst()
  return Number(done.numUpdatedRows) === 1
}

export const markTeamEnded = (db: RentalDb, id: string, answer: unknown, at: Date) =>
  db
    .updateTable('teams')
    .set({ state: 'ended', end_answer: JSON.stringify(answer), ended_at: at })
    .where('id', '=', id)
    .execute()

/** The task's root hop, made once; a later attempt of the task gets a new credential on it. */
export const upsertRootHop = (db: RentalDb, row: Insertable<TeamTables['team_hops']>) =>
  db
    .insertInto('team_hops')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('task_id')
        .where('parent_id', 'is', null)
        .doUpdateSet({ token_hash: row.token_hash, token_expires_at: row.token_expires_at }),
    )
    .execute()

export const insertHop = (db: RentalDb, row: Insertable<TeamTables['team_hops']>) =>
  db.insertInto('team_hops').values(row).execute()

export const hopsOfTask = (db: RentalDb, taskId: string) =>
  db
    .selectFrom('team_hops')
    .selectAll()
    .where('task_id', '=', taskId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

export const hopById = (db: RentalDb, id: string) =>
  db.selectFrom('team_hops').selectAll().where('id', '=', id).executeTakeFirst()

export const hopByToken = (db: RentalDb, tokenHash: Buffer) =>
  db.selectFrom('team_hops').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()

export const setHopToken = (db: RentalDb, id: string, tokenHash: Buffer | null, expiresAt: Date | null) =>
  db
    .updateTable('team_hops')
    .set({ token_hash: tokenHash, token_expires_at: expiresAt })
    .where('id', '=', id)
    .execute()

export const endHop = (
  db: RentalDb,
  id: string,
  end: Partial<
    Pick<
      HopRow,
      | 'state'
      | 'error'
      | 'output_sha256'
      | 'agent_signature'
      | 'receipt_id'
      | 'receipt_leaf_hash'
      | 'ended_at'
    >
  > & { agent_result?: string; output?: string },
) =>
  db
    .updateTable('team_hops')
    .set({ ...end, token_hash: null, token_expires_at: null })
    .where('id', '=', id)
    .execute()
