import { randomBytes } from 'node:crypto'
import { AppError, type Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { TaskService } from '../tasks/index.ts'
import {
  type BatchRow,
  batchById,
  batchesOf,
  batchOf,
  claimItem,
  countsOf,
  endItem,
  finishBatch,
  insertBatch,
  type ItemRow,
  type ItemState,
  itemsInState,
  runningBatchIds,
  setReported,
} from './store.ts'

export const TICK_QUEUE = 'rental.batches.tick'
export const MAX_ITEMS = 1000
export const MAX_CONCURRENCY = 20
export const DEFAULT_CONCURRENCY = 4

/** What the batches' rules work with: the context and the services of the areas batches need. */
export interface BatchDeps extends RentalContext {
  engagements: EngagementService
  events: EventService
  tasks: TaskService
}

export interface NewBatch {
  engagement_id: string
  items: Array<string | { text: string }>
  concurrency?: number | undefined
  name?: string | undefined
}

const batchActor = (id: string): Actor => ({ type: 'batch', id })

export function batchView(row: BatchRow, counts: Record<ItemState, number>) {
  return {
    id: row.id,
    engagement_id: row.engagement_id,
    name: row.name,
    state: row.state,
    concurrency: row.concurrency,
    total: row.total,
    counts,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
  }
}
export type BatchView = ReturnType<typeof batchView>

async function viewOf(db: RentalDb, row: BatchRow) {
  return batchView(row, (await countsOf(db, [row.id])).get(row.id)!)
}

export async function batchDetail(deps: BatchDeps, orgId: string, id: string) {
  const row = await batchOf(deps.db, orgId, id)
  if (!row) throw rentalError('batch_not_found', `no batch ${id}`)
  return viewOf(deps.db, row)
}

export async function batchList(deps: BatchDeps, orgId: string, page: Page) {
  const rows = await batchesOf(deps.db, orgId, page.limit, page.offset)
  const counts = await countsOf(
    deps.db,
    rows.map((r) => r.id),
  )
  return {
    batches: rows.map((row) => batchView(row, counts.get(row.id)!)),
    limit: page.limit,
    offset: page.offset,
  }
}

/**
 * A new batch under an active engagement of the organization: the batch and its items in one
 * transaction with its `batch.created` event and its first tick job. Its Idempotency-Key is the
 * route's (http/route.ts `idempotent`).
 */
export async function createBatch(deps: BatchDeps, orgId: string, input: NewBatch, actor: Actor) {
  const texts = input.items.map((item) => (typeof item === 'string' ? item : item.text))
  const engagement = await deps.engagements.engagementOf(orgId, input.engagement_id)
  if (!engagement) throw rentalError('engagement_not_found', `no engagement ${input.engagement_id}`)
  const answer = await inTransaction(deps.db, async (trx) => {
    if (engagement.state !== 'active')
      throw rentalError(
        'engagement_not_active',
        `the engagement is ${engagement.state}: a batch needs an active engagement`,
      )
    const id = `bat_${randomBytes(12).toString('base64url')}`
    await insertBatch(
      trx,
      {
        id,
        org_id: orgId,
        engagement_id: engagement.id,
        name: input.name ?? null,
        concurrency: input.concurrency ?? DEFAULT_CONCURRENCY,
        total: texts.length,
        state: 'running',
        created_by_type: actor.type,
        created_by_id: actor.id,
        started_at: null,
      },
      texts,
    )
    await deps.events.record(trx, {
      orgId,
      type: 'batch.created',
      subjects: { batch_id: id, engagement_id: engagement.id },
      actor,
      data: { total: texts.length, concurrency: input.concurrency ?? DEFAULT_CONCURRENCY },
    })
    await deps.jobs.enqueue(trx, TICK_QUEUE, { batch_id: id })
    return viewOf(trx, (await batchById(trx, id))!)
  })
  deps.jobs.wake(TICK_QUEUE)
  return answer
}

/** Thrown in a task's transaction when its item was taken meanwhile (or no place is free): no task is made. */
class ItemTaken extends Error {}

/**
 * Makes the item's task: the item is claimed (queued → running, its task id written) in the
 * task's own transaction, so a crash leaves either both or neither. A task the rules refuse
 * (the engagement ended, the agent revoked, a price over the limit) fails the item; one over the
 * engagement's capacity (429) leaves it queued: 'deferred', tried again at a later step.
 */
async function startItem(deps: BatchDeps, batch: BatchRow, item: ItemRow) {
  try {
    await deps.tasks.create(
      batch.org_id,
      // a queued item has its text (the table's check)
      { engagement_id: batch.engagement_id, text: item.text!, async: true },
      batchActor(batch.id),
      // the item is claimed in the transaction that writes its task: both commit, or neither
      (taskId, write) =>
        inTransaction(deps.db, async (trx) => {
          if (!(await claimItem(trx, batch.id, item.idx, taskId, deps.now()))) throw new ItemTaken()
          await write(trx)
        }),
    )
  } catch (err) {
    if (err instanceof ItemTaken) return
    // the engagement is at its capacity (429): the item stays queued for a later step
    if (err instanceof AppError && err.status === 429) return 'deferred'
    if (!(err instanceof AppError) || err.status >= 500) throw err
    await inTransaction(deps.db, async (trx) => {
      // the batch row first, then the item: the order a claim takes them in
      await batchById(trx, batch.id, true)
      if (
        await endItem(trx, batch.id, item.idx, 'queued', {
          state: 'failed',
          error: err.message,
          at: deps.now(),
        })
      )
        await progress(deps, trx, batch.id)
    })
  }
}

/**
 * After items ended, in their transaction: a `batch.progressed` event each tenth of the batch
 * (and at its end), and at the end the batch's final state with `batch.completed`. The batch row
 * is locked, so concurrent ticks report each step once.
 */
async function progress(deps: BatchDeps, trx: RentalDb, batchId: string) {
  const batch = (await batchById(trx, batchId, true))!
  if (batch.state !== 'running') return
  const counts = (await countsOf(trx, [batchId])).get(batchId)!
  const ended = counts.completed + counts.failed + counts.canceled
  const step = Math.max(1, Math.ceil(batch.total / 10))
  const subjects = { batch_id: batchId, engagement_id: batch.engagement_id }
  const actor = batchActor(batchId)
  if (ended - batch.reported >= step || (ended === batch.total && ended > batch.reported)) {
    await setReported(trx, batchId, ended)
    await deps.events.record(trx, {
      orgId: batch.org_id,
      type: 'batch.progressed',
      subjects,
      actor,
      data: { total: batch.total, ended, counts },
    })
  }
  if (ended < batch.total) return
  const state = counts.failed + counts.canceled > 0 ? 'completed_with_errors' : 'completed'
  if (!(await finishBatch(trx, batchId, state, deps.now()))) return
  await deps.events.record(trx, {
    orgId: batch.org_id,
    type: 'batch.completed',
    subjects,
    actor,
    data: { state, total: batch.total, counts },
  })
}

/**
 * The state an item ends in when its task is in `state`, or undefined while the task has not ended
 * (`submitted`, `working`, `input-required`: an item awaiting approval keeps its place). A task
 * rejected at approval was not run: its item is `canceled`.
 */
function itemEnd(state: string | undefined): ItemState | undefined {
  if (state === 'completed' || state === 'failed' || state === 'canceled') return state
  if (state === 'rejected') return 'canceled'
  return undefined
}

/**
 * One step of a batch: its running items whose task ended take the task's state; free places
 * (up to the concurrency) get the next queued items' tasks. Answers whether the batch is over,
 * or whether anything moved.
 */
export async function step(deps: BatchDeps, batchId: string): Promise<'done' | 'moved' | 'idle'> {
  const batch = await batchById(deps.db, batchId)
  if (!batch || batch.state !== 'running') return 'done'
  let moved = false
  const running = await itemsInState(deps.db, batchId, 'running', MAX_ITEMS)
  const ended: Array<{ item: ItemRow; state: ItemState }> = []
  const states = await deps.tasks.statesOf(running.map((item) => item.task_id!))
  for (const item of running) {
    const state = itemEnd(states.get(item.task_id!))
    if (state) ended.push({ item, state })
  }
  if (ended.length) {
    moved = true
    await inTransaction(deps.db, async (trx) => {
      await batchById(trx, batchId, true)
      for (const { item, state } of ended)
        await endItem(trx, batchId, item.idx, 'running', { state, at: deps.now() })
      await progress(deps, trx, batchId)
    })
  }
  const free = batch.concurrency - (running.length - ended.length)
  const queued = free > 0 ? await itemsInState(deps.db, batchId, 'queued', free) : []
  let started = 0
  for (const item of queued) {
    if ((await startItem(deps, batch, item)) === 'deferred') break
    started++
  }
  if (started) moved = true
  if (!running.length && !queued.length) {
    // nothing left to run (a batch whose every item failed before its task, or a lost step)
    await inTransaction(deps.db, (trx) => progress(deps, trx, batchId))
    const now = await batchById(deps.db, batchId)
    if (now?.state !== 'running') return 'done'
  }
  return moved ? 'moved' : 'idle'
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The batch's durable driver: a tick job runs steps for up to `TICK_MS` (at once while they move,
 * every `POLL_MS` while they wait on tasks), then hands over to the next tick job. After a crash,
 * the start of the service gives each running batch a tick again (see `resumeBatches`).
 */
export async function tick(deps: BatchDeps, batchId: string, budgetMs = 2000) {
  const until = Date.now() + budgetMs
  for (;;) {
    const outcome = await step(deps, batchId)
    if (outcome === 'done') return
    if (Date.now() >= until) break
    if (outcome === 'idle') await sleep(100)
  }
  await deps.jobs.enqueue(deps.db, TICK_QUEUE, { batch_id: batchId })
  deps.jobs.wake(TICK_QUEUE)
}

export async function startBatchRunner(deps: BatchDeps) {
  // a tick is short (2 s): a crashed process's tick is retried soon after its lease; a failing
  // one is retried every 5 s for a while (a database outage), and a start resumes every batch anyway
  await deps.jobs.queue(TICK_QUEUE, {
    retryLimit: 120,
    retryDelay: 5,
    retryBackoff: false,
    expireInSeconds: 30,
  })
  await deps.jobs.work<{ batch_id: string }>(TICK_QUEUE, (data) => tick(deps, data.batch_id), {
    pollingIntervalSeconds: 0.5,
    batchSize: 20,
  })
}

/** On start: each running batch gets a tick (its own may have died with a crashed process). */
export async function resumeBatches(deps: BatchDeps) {
  for (const id of await runningBatchIds(deps.db))
    await deps.jobs.enqueue(deps.db, TICK_QUEUE, { batch_id: id })
  deps.jobs.wake(TICK_QUEUE)
}
