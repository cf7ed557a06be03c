import { randomBytes } from 'node:crypto'
import { isEd25519DidKey, type MoneyLocale, type Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import { listingDetail, type ListingView, type MarketService } from '../market/index.ts'
import type { TaskService } from '../tasks/index.ts'
import * as store from './store.ts'
import { stateOf, type TrialRow, type TrialState } from './store.ts'

export interface TrialDeps {
  ctx: Pick<RentalContext, 'db' | 'now'>
  market: MarketService
  tasks: TaskService
  engagements: EngagementService
  events: EventService
}

/** Who acts: the member's organization, the session's client DID (if any), the actor recorded. */
export interface Caller {
  orgId: string
  clientDid: string | null
  actor: Actor
}

/** A listing's trial terms when its SLA terms name none (or none in range). */
export const DEFAULT_TRIAL_TASKS = 3
export const DEFAULT_TRIAL_DAYS = 7
const MAX_TRIAL_TASKS = 20
const MAX_TRIAL_DAYS = 30
const DAY_MS = 86_400_000

const newTrialId = () => `trl_${randomBytes(12).toString('base64url')}`
const notFound = (id: string) => rentalError('trial_not_found', `no trial ${id}`)

/** The listing's `sla.trial_tasks` and `sla.trial_days` when they are integers in range, else the defaults. */
export function trialTerms(sla: Record<string, unknown>) {
  const term = (value: unknown, max: number, fallback: number) =>
    typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max ? value : fallback
  return {
    tasks: term(sla.trial_tasks, MAX_TRIAL_TASKS, DEFAULT_TRIAL_TASKS),
    days: term(sla.trial_days, MAX_TRIAL_DAYS, DEFAULT_TRIAL_DAYS),
  }
}

/** 409 naming why the trial takes no task now; nothing for an active one. */
function assertActive(row: TrialRow, now: Date) {
  const state = stateOf(row, now)
  if (state === 'converted')
    throw rentalError(
      'trial_converted',
      `the trial is converted (engagement ${row.engagement_id}): it takes no more tasks`,
    )
  if (state === 'expired')
    throw rentalError(
      'trial_expired',
      `the trial is expired: its window ended at ${row.ends_at.toISOString()}`,
    )
  if (state === 'exhausted')
    throw rentalError(
      'trial_exhausted',
      `the trial is exhausted: its ${row.tasks_allowed} free tasks are used`,
    )
}

type ListingSummary = Pick<ListingView, 'id' | 'title' | 'agent_did' | 'price'>

export function trialView(row: TrialRow, listing: ListingSummary, now: Date) {
  return {
    id: row.id,
    state: stateOf(row, now),
    listing: { id: listing.id, title: listing.title, agent_did: listing.agent_did, price: listing.price },
    agent_did: row.agent_did,
    client_did: row.client_did,
    tasks_allowed: row.tasks_allowed,
    tasks_used: row.tasks_used,
    tasks_left: row.tasks_allowed - row.tasks_used,
    ends_at: row.ends_at.toISOString(),
    engagement_id: row.engagement_id,
    converted_at: row.converted_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  }
}
export type TrialView = ReturnType<typeof trialView>

/** The views of trials, each listing read once. */
async function views(deps: TrialDeps, rows: TrialRow[], locale: MoneyLocale) {
  const listings = new Map<string, Promise<ListingView>>()
  const listingOf = (id: string) => {
    if (!listings.has(id)) listings.set(id, listingDetail(deps.market.deps, id, locale))
    return listings.get(id)!
  }
  const now = deps.ctx.now()
  const out: TrialView[] = []
  for (const row of rows) out.push(trialView(row, await listingOf(row.listing_id), now))
  return out
}

/** The organization's trial with its tasks (and their receipts); 404 for another's. */
export async function trialDetail(deps: TrialDeps, orgId: string, id: string, locale: MoneyLocale) {
  const row = await store.trialOf(deps.ctx.db, orgId, id)
  if (!row) throw notFound(id)
  const [view] = await views(deps, [row], locale)
  const tasks = await deps.tasks.ofTrial(id)
  return {
    ...view!,
    tasks: tasks.map((t) => ({
      id: t.id,
      state: t.state,
      receipt_id: t.receipt_id,
      receipt_leaf_hash: t.receipt_leaf_hash,
      created_at: t.created_at.toISOString(),
      completed_at: t.completed_at?.toISOString() ?? null,
    })),
  }
}

export async function trialList(
  deps: TrialDeps,
  orgId: string,
  state: TrialState | undefined,
  page: Page,
  locale: MoneyLocale,
) {
  const { rows, total } = await store.trialsOf(
    deps.ctx.db,
    orgId,
    { state, now: deps.ctx.now() },
    page.limit,
    page.offset,
  )
  return { trials: await views(deps, rows, locale), total, limit: page.limit, offset: page.offset }
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505'
const exists = (row: TrialRow, now: Date) =>
  rentalError(
    'trial_exists',
    `the organization’s trial ${row.id} of this listing is ${stateOf(row, now)} until ${row.ends_at.toISOString()}`,
  )

/**
 * A trial of a listing: its terms (trialTerms), no escrow, no charge. One live trial per
 * organization and listing: a trial that has not converted and whose window is not over (active
 * or exhausted) is named in a 409; one whose window is over stops being live here.
 */
export async function startTrial(
  deps: TrialDeps,
  caller: Caller,
  input: { listing_id: string; client_did?: string | undefined },
  locale: MoneyLocale,
) {
  const clientDid = input.client_did ?? caller.clientDid
  if (clientDid !== null && !isEd25519DidKey(clientDid))
    throw rentalError('invalid_client_did', 'client_did must be a did:key of an Ed25519 key')
  const listing = await listingDetail(deps.market.deps, input.listing_id, locale)
  // as hiring: an unavailable listing takes no trial (409 listing_unavailable)
  await deps.market.assertHireable(listing.agent_did)
  const terms = trialTerms(listing.sla)
  const id = newTrialId()
  const now = deps.ctx.now()
  const write = () =>
    inTransaction(deps.ctx.db, async (trx) => {
      const live = await store.liveTrialOf(trx, caller.orgId, listing.id)
      if (live && (live.engagement_id !== null || live.ends_at <= now)) await store.endLive(trx, live.id)
      else if (live) throw exists(live, now)
      await store.insertTrial(trx, {
        id,
        org_id: caller.orgId,
        listing_id: listing.id,
        agent_did: listing.agent_did,
        client_did: clientDid,
        tasks_allowed: terms.tasks,
        tasks_used: 0,
        live: true,
        ends_at: new Date(now.getTime() + terms.days * DAY_MS),
        created_by: caller.actor.id,
        created_at: now,
      })
      await record(deps, trx, caller, 'trial.started', id, {
        listing_id: listing.id,
        agent_did: listing.agent_did,
        tasks_allowed: terms.tasks,
        days: terms.days,
      })
    })
  try {
    await write()
  } catch (err) {
    // two starts at once: the unique index lets one in; the other names it
    if (!isUniqueViolation(err)) throw err
    const live = await inTransaction(deps.ctx.db, (trx) => store.liveTrialOf(trx, caller.orgId, listing.id))
    throw live ? exists(live, now) : err
  }
  return trialDetail(deps, caller.orgId, id, locale)
}

/**
 * A trial's free task, through the tasks area's one dispatch (a task with `trial_id`, no escrow):
 * counted in the task's own transaction with the trial row locked, so that concurrent tasks never
 * pass the count; 409 naming why (expired, exhausted, converted).
 */
export async function trialTask(
  deps: TrialDeps,
  caller: Caller,
  id: string,
  input: { text: string; async?: boolean | undefined },
  locale: MoneyLocale,
) {
  const trial = await store.trialOf(deps.ctx.db, caller.orgId, id)
  if (!trial) throw notFound(id)
  assertActive(trial, deps.ctx.now())
  const made = await deps.tasks.create(
    caller.orgId,
    { trial_id: id, agent_did: trial.agent_did, text: input.text, async: input.async },
    caller.actor,
    (taskId, write) =>
      inTransaction(deps.ctx.db, async (trx) => {
        const locked = (await store.trialOf(trx, caller.orgId, id, true))!
        assertActive(locked, deps.ctx.now())
        const used = (await store.useTask(trx, id))!
        await record(deps, trx, caller, 'trial.task', id, {
          task_id: taskId,
          tasks_used: used,
          tasks_left: locked.tasks_allowed - used,
        })
        await write(trx)
      }),
  )
  const { escrow: _none, ...answer } = made
  return { ...answer, trial: await trialDetail(deps, caller.orgId, id, locale) }
}

/** The converted trial's engagement already exists: a second convert answers it. */
class Converted extends Error {
  constructor(readonly engagementId: string) {
    super('converted already')
  }
}

/**
 * Converts a trial: the pending engagement and package exactly as hiring makes them (the
 * engagements area's hire), the trial's id, task count, tasks and receipts named in the SLA body.
 * At most once: the trial row is locked in the hire's transaction; a convert that finds it
 * converted (concurrently or later) rolls its hire back and answers the same engagement.
 */
export async function convertTrial(
  deps: TrialDeps,
  caller: Caller,
  id: string,
  input: { job_id: string; client_did?: string | undefined },
  locale: MoneyLocale,
) {
  const trial = await store.trialOf(deps.ctx.db, caller.orgId, id)
  if (!trial) throw notFound(id)
  const answer = async (engagementId: string) => ({
    trial: await trialDetail(deps, caller.orgId, id, locale),
    ...(await deps.engagements.detail(caller.orgId, engagementId)),
  })
  if (trial.engagement_id !== null) return answer(trial.engagement_id)
  await deps.market.assertHireable(trial.agent_did)
  const tasks = await deps.tasks.ofTrial(id)
  const body = {
    trial_id: id,
    tasks_used: trial.tasks_used,
    task_ids: tasks.map((t) => t.id),
    receipt_ids: tasks.flatMap((t) => (t.receipt_id ? [t.receipt_id] : [])),
  }
  try {
    const hired = await deps.engagements.hire(
      { orgId: caller.orgId, clientDid: trial.client_did ?? caller.clientDid },
      { job_id: input.job_id, agent_did: trial.agent_did, client_did: input.client_did },
      caller.actor,
      {
        body,
        claim: async (trx, engagementId) => {
          const locked = (await store.trialOf(trx, caller.orgId, id, true))!
          if (locked.engagement_id !== null) throw new Converted(locked.engagement_id)
          if (locked.tasks_used !== trial.tasks_used)
            throw rentalError('trial_changed', 'a trial task started while converting: convert again')
          await store.markConverted(trx, id, engagementId, deps.ctx.now())
          await record(deps, trx, caller, 'trial.converted', id, {
            engagement_id: engagementId,
            job_id: input.job_id,
            tasks_used: locked.tasks_used,
          })
        },
      },
    )
    return { trial: await trialDetail(deps, caller.orgId, id, locale), ...hired }
  } catch (err) {
    if (err instanceof Converted) return answer(err.engagementId)
    throw err
  }
}

function record(
  deps: TrialDeps,
  trx: RentalDb,
  caller: Caller,
  type: 'trial.started' | 'trial.task' | 'trial.converted',
  trialId: string,
  data: Record<string, unknown>,
) {
  const subjects: Record<string, string> = { trial_id: trialId }
  if (typeof data.task_id === 'string') subjects.task_id = data.task_id
  if (typeof data.engagement_id === 'string') subjects.engagement_id = data.engagement_id
  return deps.events.record(trx, {
    orgId: caller.orgId,
    type,
    stream: trialId,
    subjects,
    actor: caller.actor,
    data,
  })
}
