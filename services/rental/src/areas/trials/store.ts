import { countedPageOfRows, NEWEST_FIRST } from '@svc/kit'
import { type Insertable, type Selectable, sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The trials area's table (migration 0027). */
export interface TrialTables {
  trials: {
    id: string
    org_id: string
    listing_id: string
    agent_did: string
    client_did: string | null
    tasks_allowed: number
    tasks_used: number
    live: boolean
    ends_at: Date
    engagement_id: string | null
    converted_at: Date | null
    created_by: string | null
    created_at: Date
  }
}

export type TrialRow = Selectable<TrialTables['trials']>
export type TrialState = 'active' | 'exhausted' | 'expired' | 'converted'

/** The trial's state at `now`: converted, else expired (the window is over), else exhausted, else active. */
export function stateOf(row: TrialRow, now: Date): TrialState {
  if (row.engagement_id !== null) return 'converted'
  if (row.ends_at <= now) return 'expired'
  if (row.tasks_used >= row.tasks_allowed) return 'exhausted'
  return 'active'
}

/** The same rule in SQL, for the list's `state` filter. */
const stateSql = (now: Date) => sql<TrialState>`case
  when engagement_id is not null then 'converted'
  when ends_at <= ${now} then 'expired'
  when tasks_used >= tasks_allowed then 'exhausted'
  else 'active' end`

export const insertTrial = (trx: RentalDb, row: Insertable<TrialTables['trials']>) =>
  trx.insertInto('trials').values(row).execute()

/** The organization's trial (another organization's is not found either); `lock` takes it FOR UPDATE. */
export const trialOf = (db: RentalDb, orgId: string, id: string, lock = false) => {
  const query = db.selectFrom('trials').selectAll().where('id', '=', id).where('org_id', '=', orgId)
  return (lock ? query.forUpdate() : query).executeTakeFirst()
}

/** The organization's live trial of the listing (at most one: a unique index), locked. */
export const liveTrialOf = (trx: RentalDb, orgId: string, listingId: string) =>
  trx
    .selectFrom('trials')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('listing_id', '=', listingId)
    .where('live', '=', true)
    .forUpdate()
    .executeTakeFirst()

/** A trial whose window is over no longer blocks a new one. */
export const endLive = (trx: RentalDb, id: string) =>
  trx.updateTable('trials').set({ live: false }).where('id', '=', id).execute()

/** One more task used (the row is locked by the caller; the condition holds it without the lock too). */
export async function useTask(trx: RentalDb, id: string): Promise<number | undefined> {
  const row = await trx
    .updateTable('trials')
    .set({ tasks_used: sql`tasks_used + 1` })
    .where('id', '=', id)
    .where('engagement_id', 'is', null)
    .whereRef('tasks_used', '<', 'tasks_allowed')
    .returning('tasks_used')
    .executeTakeFirst()
  return row?.tasks_used
}

/** Converted: the engagement kept, the trial no longer live; false when it was converted already. */
export async function markConverted(trx: RentalDb, id: string, engagementId: string, at: Date) {
  const result = await trx
    .updateTable('trials')
    .set({ engagement_id: engagementId, converted_at: at, live: false })
    .where('id', '=', id)
    .where('engagement_id', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** A page of the organization's trials, newest first, in a state (at `now`) when asked, and their count. */
export async function trialsOf(
  db: RentalDb,
  orgId: string,
  filter: { state?: TrialState | undefined; now: Date },
  limit: number,
  offset: number,
) {
  const state = filter.state
  return countedPageOfRows(
    db,
    {
      table: 'trials',
      owner: ['org_id', orgId],
      where: (q) => (state === undefined ? q : q.where(stateSql(filter.now), '=', state)),
      order: NEWEST_FIRST,
    },
    { limit, offset },
  )
}
