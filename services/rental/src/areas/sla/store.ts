import type { Insertable, Selectable } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'

/** The SLA area's tables (migration 0035). */
export interface SlaTables {
  sla_states: { engagement_id: string; term: string; breached: boolean; since: Date }
  sla_events: {
    id: string
    org_id: string
    engagement_id: string
    type: SlaEventType
    term: string
    measured: number | null
    target: number
    measurement: Json
    event_id: string
    created_at: Date
  }
}

export type SlaEventType = 'sla.breached' | 'sla.restored'
export type SlaEventRow = Selectable<SlaTables['sla_events']>
export type SlaStateRow = Selectable<SlaTables['sla_states']>

/** The engagement's term states, locked FOR UPDATE (one consumer writes at a time anyway). */
export const statesOf = (trx: RentalDb, engagementId: string, lock = false) => {
  let q = trx.selectFrom('sla_states').selectAll().where('engagement_id', '=', engagementId)
  if (lock) q = q.forUpdate()
  return q.execute()
}

export const setState = (trx: RentalDb, row: SlaStateRow) =>
  trx
    .insertInto('sla_states')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['engagement_id', 'term']).doUpdateSet({ breached: row.breached, since: row.since }),
    )
    .execute()

export const insertSlaEvent = (trx: RentalDb, row: Insertable<SlaTables['sla_events']>) =>
  trx.insertInto('sla_events').values(row).execute()

export interface SlaEventFilter {
  orgId: string
  engagementId?: string | undefined
  type?: SlaEventType | undefined
  from?: Date | undefined
  to?: Date | undefined
}

/** The organization's SLA events, newest first, filtered, one page and the total. */
export async function slaEventsOf(db: RentalDb, filter: SlaEventFilter, limit: number, offset: number) {
  let q = db.selectFrom('sla_events').where('org_id', '=', filter.orgId)
  if (filter.engagementId !== undefined) q = q.where('engagement_id', '=', filter.engagementId)
  if (filter.type !== undefined) q = q.where('type', '=', filter.type)
  if (filter.from !== undefined) q = q.where('created_at', '>=', filter.from)
  if (filter.to !== undefined) q = q.where('created_at', '<', filter.to)
  const rows = await q
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()
  const count = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return { rows, total: Number(count.n) }
}
