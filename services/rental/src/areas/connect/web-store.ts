import type { Insertable } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The web pages agents fetched (or were refused) through the rental (migration 0049). */
export interface WebTables {
  web_fetches: {
    id: string
    org_id: string
    engagement_id: string
    task_id: string
    agent_did: string
    url: string
    final_url: string | null
    state: 'fetched' | 'refused' | 'failed'
    reason: string | null
    status: number | null
    bytes: number | null
    content_sha256: string | null
    receipt_id: string | null
    receipt_leaf_hash: string | null
    created_at: Date
  }
}

export const insertFetch = (trx: RentalDb, row: Insertable<WebTables['web_fetches']>) =>
  trx.insertInto('web_fetches').values(row).execute()

/** The task's fetches that reached a server (fetched or failed): what max_fetches_per_task counts. */
export async function fetchesOfTask(db: RentalDb, taskId: string): Promise<number> {
  const row = await db
    .selectFrom('web_fetches')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('task_id', '=', taskId)
    .where('state', 'in', ['fetched', 'failed'])
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export const updateFetch = (
  trx: RentalDb,
  id: string,
  set: Partial<Omit<WebTables['web_fetches'], 'id' | 'org_id' | 'task_id'>>,
) => trx.updateTable('web_fetches').set(set).where('id', '=', id).execute()
