import { type Static, Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { inTransaction } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { MarketService } from '../market/index.ts'
import { engagementEvent, engagementNotFound } from './service.ts'
import { type EngagementRow, engagementOf } from './store.ts'
import { setCapacity } from './terms-store.ts'

const Limit = (maximum: number, description: string) =>
  Type.Union([Type.Integer({ minimum: 1, maximum }), Type.Null()], { description })
const fields = {
  max_concurrent_tasks: Limit(
    10_000,
    'unfinished tasks at once (submitted, working, input-required); null: no limit',
  ),
  tasks_per_minute: Limit(100_000, 'new tasks a minute (a fixed window); null: no limit'),
}

/** A change: the fields given replace the current ones (null lifts a limit). */
export const CapacityChange = Type.Object(
  {
    max_concurrent_tasks: Type.Optional(fields.max_concurrent_tasks),
    tasks_per_minute: Type.Optional(fields.tasks_per_minute),
  },
  { additionalProperties: false },
)
export type CapacityChange = Static<typeof CapacityChange>

export const CapacityView = Type.Object({
  engagement_id: Type.String(),
  ...fields,
  listing_max_concurrency: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'the cap of the agent’s market listing when it is `limited` (the engagement’s stays within it)',
  }),
  updated_at: Type.Union([Type.String(), Type.Null()]),
})

type Market = Pick<MarketService, 'listingConcurrencyOf'>

const view = (row: EngagementRow, listingCap: number | null) => ({
  engagement_id: row.id,
  max_concurrent_tasks: row.max_concurrent_tasks,
  tasks_per_minute: row.tasks_per_minute,
  listing_max_concurrency: listingCap,
  updated_at: row.capacity_updated_at?.toISOString() ?? null,
})

export async function capacityDetail(
  ctx: Pick<RentalContext, 'db'>,
  market: Market,
  orgId: string,
  id: string,
) {
  const row = await engagementOf(ctx.db, orgId, id)
  if (!row) throw engagementNotFound(id)
  return view(row, await market.listingConcurrencyOf(row.agent_did))
}

/**
 * Sets the engagement's limits (the engagement locked): only a pending or active engagement takes
 * them, and `max_concurrent_tasks` stays within the cap of the agent's `limited` listing.
 */
export async function changeCapacity(
  ctx: Pick<RentalContext, 'db' | 'now'>,
  who: { orgId: string; events: EventService; actor: Actor; market: Market },
  id: string,
  change: CapacityChange,
) {
  if (Object.keys(change).length === 0)
    throw rentalError('nothing_to_change', 'give max_concurrent_tasks or tasks_per_minute')
  const found = await engagementOf(ctx.db, who.orgId, id)
  if (!found) throw engagementNotFound(id)
  // read before the transaction: the market reads outside it
  const cap = await who.market.listingConcurrencyOf(found.agent_did)
  return inTransaction(ctx.db, async (trx) => {
    const row = (await engagementOf(trx, who.orgId, id, true))!
    const state: string = row.state
    if (state !== 'active' && state !== 'pending')
      throw rentalError('engagement_ended', `the engagement is ${state}: its capacity no longer changes`)
    const limits = {
      max_concurrent_tasks:
        change.max_concurrent_tasks === undefined ? row.max_concurrent_tasks : change.max_concurrent_tasks,
      tasks_per_minute:
        change.tasks_per_minute === undefined ? row.tasks_per_minute : change.tasks_per_minute,
    }
    if (cap !== null && limits.max_concurrent_tasks !== null && limits.max_concurrent_tasks > cap)
      throw rentalError(
        'capacity_over_listing',
        `max_concurrent_tasks ${limits.max_concurrent_tasks} is above the agent’s listing, limited to ${cap}`,
      )
    const at = ctx.now()
    await setCapacity(trx, id, limits, at)
    await engagementEvent(who.events, trx, who.orgId, id, who.actor, 'engagement.capacity_changed', {
      ...limits,
      changes: change,
    })
    return view({ ...row, ...limits, capacity_updated_at: at }, cap)
  })
}
