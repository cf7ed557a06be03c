import { countedPageOfRows, NEWEST_FIRST } from '@svc/kit'
import type { Insertable, Selectable } from 'kysely'
import type { Json, RentalDb } from '../../db.ts'
import type { QueryPart } from '@svc/kit'

/** The SLA area's tables (migrations 0035, 0038). */
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
  sla_credits: {
    id: string
    sla_event_id: string
    event_id: string
    org_id: string
    engagement_id: string
    term: string
    period_from: Date
    period_to: Date
    fees_fils: number
    credit_bps: number
    owed_fils: number
    amount_fils: number
    transfer_id: string | null
    receipt_id: string
    receipt_leaf_hash: string
    credited_event_id: string
    created_at: Date
  }
}

export type SlaEventType = 'sla.breached' | 'sla.restored'
export type SlaEventRow = Selectable<SlaTables['sla_events']>
export type SlaStateRow = Selectable<SlaTables['sla_states']>
export type SlaCreditRow = Selectable<SlaTables['sla_credits']>

/**
 * The engagement's term states, as a part of the SLA's one read. Not locked: every writer of a
 * state holds the engagement's row lock (`remeasure`), taken in a statement before this read.
 */
export const statesPart = (db: RentalDb, engagementId: string): QueryPart<SlaStateRow[]> => ({
  query: db.selectFrom('sla_states').selectAll().where('engagement_id', '=', engagementId),
  read: (rows) =>
    rows.map((r) => ({
      engagement_id: r.engagement_id as string,
      term: r.term as string,
      breached: r.breached as boolean,
      since: new Date(r.since as string),
    })),
})

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
  return countedPageOfRows(
    db,
    {
      table: 'sla_events',
      owner: ['org_id', filter.orgId],
      where(q) {
        if (filter.engagementId !== undefined) q = q.where('engagement_id', '=', filter.engagementId)
        if (filter.type !== undefined) q = q.where('type', '=', filter.type)
        if (filter.from !== undefined) q = q.where('created_at', '>=', filter.from)
        if (filter.to !== undefined) q = q.where('created_at', '<', filter.to)
        return q
      },
      order: NEWEST_FIRST,
    },
    { limit, offset },
  )
}

/** The organization's sla.breached event of an engagement by its log event id (evt_<n>), with its credit if made. */
export async function breachByEventId(db: RentalDb, orgId: string, engagementId: string, eventId: string) {
  const breach = await db
    .selectFrom('sla_events')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
    .where('event_id', '=', eventId)
    .where('type', '=', 'sla.breached')
    .executeTakeFirst()
  if (!breach) return undefined
  return { breach, credit: await creditOfBreach(db, breach.id) }
}

/** How many breaches were recorded about these engagements. */
export async function breachCount(db: RentalDb, engagementIds: string[]) {
  if (engagementIds.length === 0) return 0
  const row = await db
    .selectFrom('sla_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('type', '=', 'sla.breached')
    .where('engagement_id', 'in', engagementIds)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export const slaEventById = (db: RentalDb, id: string) =>
  db.selectFrom('sla_events').selectAll().where('id', '=', id).executeTakeFirst()

/** Breaches recorded before `before` (the current period's start) not credited yet, oldest first. */
export const uncreditedBreaches = (db: RentalDb, before: Date, limit: number) =>
  db
    .selectFrom('sla_events')
    .select(['id', 'org_id', 'engagement_id'])
    .where('type', '=', 'sla.breached')
    .where('created_at', '<', before)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('sla_credits')
            .select('sla_credits.id')
            .whereRef('sla_credits.sla_event_id', '=', 'sla_events.id'),
        ),
      ),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute()

export const creditOfBreach = (db: RentalDb, slaEventId: string) =>
  db.selectFrom('sla_credits').selectAll().where('sla_event_id', '=', slaEventId).executeTakeFirst()

/** What the engagement's breaches of the period starting at `from` were credited already (the cap's running sum). */
export async function creditedInPeriod(db: RentalDb, engagementId: string, from: Date) {
  const row = await db
    .selectFrom('sla_credits')
    .select((eb) => eb.fn.sum<number | string | null>('amount_fils').as('sum'))
    .where('engagement_id', '=', engagementId)
    .where('period_from', '=', from)
    .executeTakeFirstOrThrow()
  return Number(row.sum ?? 0)
}

export const insertCredit = (trx: RentalDb, row: Insertable<SlaTables['sla_credits']>) =>
  trx.insertInto('sla_credits').values(row).execute()

/** The engagement's credits, newest first. */
export const creditsOfEngagement = (db: RentalDb, engagementId: string) =>
  db
    .selectFrom('sla_credits')
    .selectAll()
    .where('engagement_id', '=', engagementId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()

/** The credits of these breaches (sla_events ids). */
export const creditsOfBreaches = (db: RentalDb, slaEventIds: string[]) =>
  slaEventIds.length === 0
    ? Promise.resolve([] as SlaCreditRow[])
    : db.selectFrom('sla_credits').selectAll().where('sla_event_id', 'in', slaEventIds).execute()

/** The credits posted by these rail transfers (a statement's lines). */
export const creditsByTransfers = (db: RentalDb, transferIds: string[]) =>
  transferIds.length === 0
    ? Promise.resolve([] as SlaCreditRow[])
    : db.selectFrom('sla_credits').selectAll().where('transfer_id', 'in', transferIds).execute()
