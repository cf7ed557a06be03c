import { money, type MoneyLocale } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { BudgetService } from '../budgets/index.ts'
import type { DisputeService } from '../disputes/index.ts'
import {
  engagementEvent,
  engagementNotFound,
  type EngagementRow,
  type EngagementService,
  type EscrowRow,
  walletOf,
} from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { TaskService } from '../tasks/index.ts'

export interface EndDeps {
  ctx: Pick<RentalContext, 'db' | 'rail' | 'receipts' | 'now'>
  engagements: EngagementService
  tasks: TaskService
  events: EventService
  budgets: Pick<BudgetService, 'release'>
  disputes: DisputeService
}

export type Running = 'finish' | 'cancel'

/** What became of each escrow at the end. */
type Outcome =
  | 'released' // paid out before the end
  | 'pending_release' // its task completed: the client's signed release still pays it
  | 'awaiting_task' // its task still runs (`finish`): released or refunded by the usual paths once it ends
  | 'returned' // opened, never paid: back to the client's wallet now
  | 'withdrawn' // offered, never opened: no money had moved

const DONE = new Set(['failed', 'canceled', 'rejected'])
const RUNNING = new Set(['submitted', 'working', 'input-required'])

/**
 * Ends the client's active engagement, in one transaction with its row locked (of two ends, the
 * second waits and answers 409 `engagement_ended`): running tasks canceled (`cancel`) or left to
 * finish (`finish`); each escrow settled once (see Outcome); `escrow.returned` and
 * `engagement.ended` events; an `engagement.ended` receipt carrying the final figures.
 */
export async function endEngagement(
  deps: EndDeps,
  orgId: string,
  id: string,
  running: Running,
  actor: Actor,
  locale: MoneyLocale,
) {
  const answer = await inTransaction(deps.ctx.db, async (trx) => {
    const engagement = await deps.engagements.engagementOf(orgId, id, { trx, lock: true })
    if (!engagement) throw engagementNotFound(id)
    if (engagement.state === 'ended')
      throw rentalError(
        'engagement_ended',
        `the engagement is ended (since ${engagement.ended_at?.toISOString()})`,
      )
    if (engagement.state !== 'active')
      throw rentalError('engagement_not_active', `the engagement is ${engagement.state}: nothing to end`)
    const now = deps.ctx.now()
    const canceled: string[] = []
    const unfinished = (await deps.tasks.ofEngagement(trx, orgId, id)).filter((t) => RUNNING.has(t.state))
    // `finish` leaves running tasks to finish, except one whose escrow is still offered: nothing
    // holds money for it and, the engagement ended, nothing can (docs/rental/ending.md)
    const unfunded = new Set(
      (await deps.engagements.end.escrowsOf(trx, id))
        .filter((e) => e.state === 'offered' && e.task_id !== null)
        .map((e) => e.task_id!),
    )
    for (const task of unfinished) {
      if (running === 'finish' && !unfunded.has(task.id)) continue
      const reason =
        running === 'cancel'
          ? 'canceled: the engagement ended'
          : 'canceled: the engagement ended before its escrow was signed'
      if (await deps.tasks.cancelIn(trx, orgId, task.id, reason, actor)) canceled.push(task.id)
    }
    // escrows locked before the tasks' states are read: a task that failed meanwhile (its
    // transaction locks its escrow, see returnAfterEnd) has committed, and its state is seen here
    const locked = await deps.engagements.end.lockEscrowsOf(trx, id)
    const states = new Map((await deps.tasks.ofEngagement(trx, orgId, id)).map((t) => [t.id, t.state]))
    const escrows = []
    for (const escrow of locked) {
      const outcome = await settle(deps, trx, engagement, escrow, states, actor, now)
      escrows.push({
        escrow_id: escrow.id,
        task_id: escrow.task_id,
        outcome,
        opened: escrow.open_transfer_id !== null,
        amount_fils: Number(escrow.amount_fils),
        fee_fils: Number(escrow.fee_fils ?? 0),
      })
    }
    const figures = figuresOf(escrows)
    const receipt = await deps.ctx.receipts.record(trx, {
      type: 'engagement.ended',
      subject: id,
      data: {
        engagement_id: id,
        sla_hash: engagement.sla_hash,
        agent_did: engagement.agent_did,
        client_did: engagement.client_did,
        running,
        canceled_tasks: canceled,
        escrows,
        figures,
        currency: 'AED',
        ended_at: now.toISOString(),
      },
    })
    const kept = {
      engagement_id: id,
      state: 'ended' as const,
      ended_at: now.toISOString(),
      running,
      canceled_tasks: canceled,
      escrows,
      figures,
      receipt: { id: receipt.id, leaf_hash: receipt.leafHash },
    }
    await deps.engagements.end.markEnded(trx, id, kept, now)
    await engagementEvent(deps.events, trx, orgId, id, actor, 'engagement.ended', {
      from: 'active',
      to: 'ended',
      running,
      canceled_tasks: canceled.length,
      ...figures,
      receipt_id: receipt.id,
    })
    return kept
  })
  return endView(answer, locale)
}

async function settle(
  deps: EndDeps,
  trx: RentalDb,
  engagement: EngagementRow,
  escrow: EscrowRow,
  states: Map<string, string>,
  actor: Actor,
  now: Date,
): Promise<Outcome> {
  if (escrow.state === 'released') return 'released'
  const taskState = escrow.task_id ? states.get(escrow.task_id) : undefined
  if (escrow.state === 'open' && taskState === 'completed') return 'pending_release'
  if (taskState !== undefined && !DONE.has(taskState) && taskState !== 'completed') return 'awaiting_task'
  if (escrow.state !== 'open' && escrow.state !== 'offered') return escrow.state as Outcome
  // a live dispute keeps its escrow: 409 escrow_frozen (settle or withdraw the dispute first)
  if (escrow.state === 'open') await deps.disputes.assertNotFrozen(trx, escrow.id)
  return giveBack(deps, trx, engagement, escrow, actor, now)
}

/**
 * An unused escrow settled once: an opened one's money back to the client's wallet (a balanced
 * rail transfer, key `end:<escrow id>`), an offered one withdrawn (no money had moved); its
 * budgets' commitment released; an `escrow.returned` event. The caller holds the escrow's lock.
 */
async function giveBack(
  deps: Pick<EndDeps, 'ctx' | 'engagements' | 'events' | 'budgets'>,
  trx: RentalDb,
  engagement: EngagementRow,
  escrow: EscrowRow,
  actor: Actor,
  now: Date,
): Promise<'returned' | 'withdrawn'> {
  const amount = Number(escrow.amount_fils)
  let transferId: string | null = null
  if (escrow.state === 'open') {
    const transfer = await deps.ctx.rail.transfer(trx, {
      idempotencyKey: `end:${escrow.id}`,
      kind: 'escrow_return',
      postings: [
        { account: `escrow:${escrow.id}`, amount: -amount },
        { account: walletOf(engagement.org_id), amount },
      ],
      memo: { escrow_id: escrow.id, engagement_id: engagement.id, escrow_hash: escrow.hash },
    })
    transferId = transfer.id
  }
  await deps.engagements.end.markReturned(trx, escrow.id, transferId, now)
  // the money committed for it (budgets) is no longer spent
  await deps.budgets.release(trx, {
    orgId: engagement.org_id,
    engagementId: engagement.id,
    agentDid: engagement.agent_did,
    amountFils: amount,
    at: now,
  })
  await engagementEvent(
    deps.events,
    trx,
    engagement.org_id,
    engagement.id,
    actor,
    'escrow.returned',
    { amount_fils: amount, currency: 'AED', transfer_id: transferId, opened: transferId !== null },
    { escrow_id: escrow.id, ...(escrow.task_id ? { task_id: escrow.task_id } : {}) },
  )
  return transferId === null ? 'withdrawn' : 'returned'
}

/**
 * A task of an ended engagement (left to finish) failed, was canceled or rejected: its escrow goes
 * back to the client's wallet now, by the end's path (the same transfer key `end:<escrow id>`, so
 * exactly once), in the task's transaction. The escrow row is locked before the engagement is
 * read: an end running at the same time locks the escrows before it reads the tasks' states, so
 * one of the two sees the other's commit and only one returns it. An escrow frozen by a live
 * dispute stays held: the dispute's resolution settles it.
 */
export async function returnAfterEnd(
  deps: Pick<EndDeps, 'ctx' | 'engagements' | 'events' | 'budgets' | 'disputes'>,
  trx: RentalDb,
  task: { id: string; orgId: string; engagementId: string | null },
  actor: Actor,
) {
  if (task.engagementId === null) return
  const escrow = await deps.engagements.escrowOfOrg(task.orgId, { taskId: task.id }, { trx, lock: true })
  if (!escrow || (escrow.state !== 'open' && escrow.state !== 'offered')) return
  const engagement = await deps.engagements.engagementOf(task.orgId, task.engagementId, { trx })
  if (engagement?.state !== 'ended') return
  if (escrow.state === 'open' && (await deps.disputes.frozenBy(trx, escrow.id))) return
  await giveBack(deps, trx, engagement, escrow, actor, deps.ctx.now())
}

type Settled = { outcome: Outcome; opened: boolean; amount_fils: number; fee_fils: number }

/** The final statement's figures, in fils: what was escrowed, paid out (and its fees), returned, still pending. */
function figuresOf(settled: Settled[]) {
  const opened = settled.filter((s) => s.opened)
  const sum = (outcome: Outcome) =>
    opened.filter((s) => s.outcome === outcome).reduce((total, s) => total + s.amount_fils, 0)
  return {
    escrowed_fils: opened.reduce((total, s) => total + s.amount_fils, 0),
    released_fils: sum('released'),
    fees_fils: opened.reduce((total, s) => total + s.fee_fils, 0),
    returned_fils: sum('returned'),
    pending_release_fils: sum('pending_release'),
    awaiting_task_fils: sum('awaiting_task'),
  }
}

export type EndAnswer = {
  engagement_id: string
  state: 'ended'
  ended_at: string
  running: Running
  canceled_tasks: string[]
  escrows: Array<{ escrow_id: string; task_id: string | null; outcome: Outcome } & Settled>
  figures: ReturnType<typeof figuresOf>
  receipt: { id: string; leaf_hash: string }
}

/** The end as answered: the kept figures shown as money in the caller's locale. */
export function endView(answer: EndAnswer, locale: MoneyLocale) {
  const m = (fils: number) => money(fils, 'AED', locale)
  const f = answer.figures
  return {
    ...answer,
    escrows: answer.escrows.map((e) => ({ ...e, amount: m(e.amount_fils) })),
    statement: {
      escrowed: m(f.escrowed_fils),
      released: m(f.released_fils),
      fees: m(f.fees_fils),
      returned: m(f.returned_fils),
      pending_release: m(f.pending_release_fils),
      awaiting_task: m(f.awaiting_task_fils),
    },
  }
}
