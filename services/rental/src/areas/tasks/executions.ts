import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { TaskRow } from './store.ts'

/** GET /v1/executions' filters: a state, an agent, an engagement, a period of creation. */
export interface ExecutionFilter {
  state?: TaskRow['state'] | undefined
  agentDid?: string | undefined
  engagementId?: string | undefined
  since?: Date | undefined
  until?: Date | undefined
}

/** Where the next page starts: the last row's creation time (as PostgreSQL writes it, to the microsecond) and id. */
const encodeCursor = (createdAt: string, id: string) =>
  Buffer.from(JSON.stringify([createdAt, id]), 'utf8').toString('base64url')

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/.test(value[0]) &&
      value[1].length <= 100
    )
      return [value[0], value[1]]
  } catch {
    // not JSON: answered below
  }
  throw rentalError('invalid_request', 'querystring.cursor is not a cursor this list gave')
}

/**
 * A page of the organization's tasks, newest first, by keyset (creation time, id): a page is the
 * same however many tasks are created meanwhile, and `next_cursor` is null at the end.
 */
export async function executionPage(
  db: RentalDb,
  orgId: string,
  filter: ExecutionFilter,
  page: { limit: number; cursor?: string | undefined },
) {
  let query = db
    .selectFrom('tasks')
    .select([
      'id',
      'engagement_id',
      'trial_id',
      'agent_did',
      'state',
      'price_fils',
      'error',
      'created_at',
      'started_at',
      'completed_at',
      'receipt_id',
    ])
    .select(sql<string>`created_at::text`.as('created_text'))
    .where('org_id', '=', orgId)
  if (filter.state) query = query.where('state', '=', filter.state)
  if (filter.agentDid) query = query.where('agent_did', '=', filter.agentDid)
  if (filter.engagementId) query = query.where('engagement_id', '=', filter.engagementId)
  if (filter.since) query = query.where('created_at', '>=', filter.since)
  if (filter.until) query = query.where('created_at', '<', filter.until)
  if (page.cursor) {
    const [at, id] = decodeCursor(page.cursor)
    query = query.where(sql<boolean>`(created_at, id) < (${at}::timestamptz, ${id})`)
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute()
  const more = rows.length > page.limit
  const shown = rows.slice(0, page.limit)
  const last = shown[shown.length - 1]
  return {
    rows: shown,
    nextCursor: more && last ? encodeCursor(last.created_text, last.id) : null,
  }
}

/** The organization's tasks created since `since` and what they cost (canceled and rejected ones are not charged). */
export async function usageSince(db: RentalDb, orgId: string, since: Date) {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => [
      eb.fn.countAll<string>().as('tasks'),
      sql<string>`count(*) filter (where state = 'completed')`.as('completed'),
      sql<string>`coalesce(sum(price_fils) filter (where state not in ('canceled', 'rejected')), 0)`.as(
        'spend',
      ),
    ])
    .where('org_id', '=', orgId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow()
  return { tasks: Number(row.tasks), completed: Number(row.completed), spendFils: Number(row.spend) }
}
