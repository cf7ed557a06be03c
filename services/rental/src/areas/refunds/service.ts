import { randomUUID } from 'node:crypto'
import { type MoneyLocale, money, type Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { BudgetService } from '../budgets/index.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { DisputeService } from '../disputes/index.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { InvoiceService } from '../invoices/index.ts'
import type { OrgService } from '../orgs/index.ts'
import { type RefundBody, settle } from './settle.ts'
import * as store from './store.ts'
import type { RefundRow, RefundState } from './store.ts'

export { feePartOf, type RefundBody } from './settle.ts'

export interface RefundDeps {
  ctx: Pick<RentalContext, 'db' | 'rail' | 'receipts' | 'now' | 'provider'>
  engagements: EngagementService
  events: EventService
  orgs: OrgService
  catalogue: CatalogueService
  invoices: InvoiceService
  budgets: BudgetService
  disputes: Pick<DisputeService, 'frozenBy'>
}

/** What settling needs (a dispute's resolution settles through it too, without the disputes area's service). */
export type SettleDeps = Omit<RefundDeps, 'disputes'>

/** Who asks: their organization and whether they are one of the platform's operators. */
export interface Caller {
  orgId: string
  operator: boolean
  actor: Actor
}

const notFound = (id: string) => rentalError('refund_not_found', `no refund ${id}`)
const wrongState = (row: RefundRow, move: string) =>
  rentalError('refund_state', `the refund is ${row.state}: it cannot be ${move}`)

export function refundView(row: RefundRow, locale: MoneyLocale = 'en') {
  return {
    id: row.id,
    state: row.state,
    escrow_id: row.escrow_id,
    engagement_id: row.engagement_id,
    task_id: row.task_id,
    agent_did: row.agent_did,
    requested: money(Number(row.requested_fils), row.currency, locale),
    amount: money(Number(row.amount_fils), row.currency, locale),
    reason: row.reason,
    reject_reason: row.reject_reason,
    transfer_id: row.transfer_id,
    receipt_id: row.receipt_id,
    receipt_leaf_hash: row.receipt_leaf_hash,
    // what the approval signed with the provider key (verifiable offline with its did:key)
    signed:
      row.body && row.body_hash && row.provider_signature
        ? {
            body: row.body as RefundBody,
            hash: row.body_hash,
            signature: row.provider_signature,
            provider_did: (row.body as RefundBody).provider_did,
          }
        : null,
    credit_note:
      row.credit_note_id && row.credit_note_number
        ? { id: row.credit_note_id, number: row.credit_note_number }
        : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}
export type RefundView = ReturnType<typeof refundView>

export interface RefundInput {
  escrow_id?: string
  escrow_hash?: string
  task_id?: string
  amount_fils: number
  reason: string
}

function checked(input: RefundInput) {
  const named = [input.escrow_id, input.escrow_hash, input.task_id].filter((v) => v !== undefined)
  if (named.length !== 1)
    throw rentalError('invalid_request', 'body: give one of escrow_id, escrow_hash or task_id')
  const by =
    input.escrow_id !== undefined
      ? { escrowId: input.escrow_id }
      : input.escrow_hash !== undefined
        ? { escrowHash: input.escrow_hash }
        : { taskId: input.task_id! }
  if (!Number.isSafeInteger(input.amount_fils) || input.amount_fils <= 0)
    throw rentalError('invalid_request', 'body.amount_fils must be a positive integer of fils')
  return by
}

/**
 * A client asks for a refund of a released escrow of its own: the escrow row locked, the amount
 * at most what was paid less the refunds requested, accepted or settled already; `requested`.
 * `POST /api/refunds`: the refund asked for, in one transaction (its Idempotency-Key is the
 * route's: http/route.ts `idempotent`).
 */
export async function requestRefund(
  deps: RefundDeps,
  caller: Caller,
  input: RefundInput,
  locale: MoneyLocale = 'en',
): Promise<RefundView> {
  const by = checked(input)
  const id = await inTransaction(deps.ctx.db, (trx) => insertRequested(deps, trx, caller, input, by))
  return refundView((await store.refundById(deps.ctx.db, id))!, locale)
}

async function insertRequested(
  deps: RefundDeps,
  trx: RentalDb,
  caller: Caller,
  input: RefundInput,
  by: ReturnType<typeof checked>,
) {
  const id = `ref_${randomUUID()}`
  const escrow = await deps.engagements.escrowOfOrg(caller.orgId, by, { trx, lock: true })
  if (!escrow)
    throw rentalError('escrow_not_found', 'no such escrow (or task with an escrow) of the organization')
  if (escrow.state !== 'released')
    throw rentalError(
      'not_refundable',
      `body: the escrow is ${escrow.state}, not released: nothing was paid yet`,
    )
  // money in question in a live dispute is settled by the dispute's resolution, not by a refund
  const frozen = await deps.disputes.frozenBy(trx, escrow.id)
  if (frozen)
    throw rentalError(
      'escrow_frozen',
      `the escrow is frozen by dispute ${frozen.id} (${frozen.state}): no refund is requested while the dispute is open`,
    )
  const paid = Number(escrow.amount_fils)
  const left = paid - (await store.committedOf(trx, escrow.id))
  if (input.amount_fils > left)
    throw rentalError(
      'not_refundable',
      `body.amount_fils: at most ${left} fils of this escrow can still be refunded`,
    )
  const engagement = await deps.engagements.engagementOf(caller.orgId, escrow.engagement_id, { trx })
  const now = deps.ctx.now()
  await store.insertRefund(trx, {
    id,
    org_id: caller.orgId,
    escrow_id: escrow.id,
    engagement_id: escrow.engagement_id,
    task_id: escrow.task_id,
    agent_did: engagement!.agent_did,
    currency: escrow.currency,
    requested_fils: input.amount_fils,
    amount_fils: input.amount_fils,
    state: 'requested',
    reason: input.reason,
    requested_by: caller.actor.id,
    created_at: now,
    updated_at: now,
  })
  await recordRefundEvent(deps, trx, caller, id, escrow.id, 'refund.requested', {
    amount_fils: input.amount_fils,
    reason: input.reason,
  })
  return id
}

export async function refundList(deps: RefundDeps, orgId: string, page: Page, locale: MoneyLocale) {
  const { rows, total } = await store.refundsOf(deps.ctx.db, orgId, page.limit, page.offset)
  return { refunds: rows.map((r) => refundView(r, locale)), total, limit: page.limit, offset: page.offset }
}

/** Whether the caller may act on the refund as its provider: an operator or the agent's provider organization. */
const isProvider = async (deps: RefundDeps, caller: Caller, row: RefundRow) =>
  caller.operator || (await deps.catalogue.isProviderOf(caller.orgId, row.agent_did))

/**
 * Who the caller is to the refund, if they may see it (its client, its provider, an operator):
 * anyone else gets 404, like an unknown id. Read before the transaction (the catalogue reads the
 * pool; the refund's organization and agent never change).
 */
async function standingOf(deps: RefundDeps, caller: Caller, id: string) {
  const row = await store.refundById(deps.ctx.db, id)
  if (!row) throw notFound(id)
  const provider = await isProvider(deps, caller, row)
  if (row.org_id !== caller.orgId && !provider) throw notFound(id)
  return { provider }
}

/** The provider (or an operator) accepts a requested refund, for the amount asked or less. */
export async function acceptRefund(deps: RefundDeps, caller: Caller, id: string, amountFils?: number) {
  if (amountFils !== undefined && (!Number.isSafeInteger(amountFils) || amountFils <= 0))
    throw rentalError('invalid_request', 'body.amount_fils must be a positive integer of fils')
  return move(deps, caller, id, async (trx, row, standing) => {
    if (!standing.provider)
      throw rentalError(
        'forbidden',
        'only the agent’s provider organization or an operator may accept a refund',
      )
    if (row.state !== 'requested') throw wrongState(row, 'accepted')
    const amount = amountFils ?? Number(row.amount_fils)
    if (amount > Number(row.amount_fils))
      throw rentalError('invalid_request', `body.amount_fils: at most the ${row.amount_fils} fils asked for`)
    await change(trx, row, ['requested'], {
      state: 'accepted',
      amount_fils: amount,
      updated_at: deps.ctx.now(),
    })
    await recordRefundEvent(deps, trx, caller, id, row.escrow_id, 'refund.accepted', { amount_fils: amount })
  })
}

/** Either party (or an operator) rejects a refund not settled yet, with a reason. */
export async function rejectRefund(deps: RefundDeps, caller: Caller, id: string, reason: string) {
  return move(deps, caller, id, async (trx, row) => {
    if (row.state !== 'requested' && row.state !== 'accepted') throw wrongState(row, 'rejected')
    await change(trx, row, ['requested', 'accepted'], {
      state: 'rejected',
      reject_reason: reason,
      updated_at: deps.ctx.now(),
    })
    await recordRefundEvent(deps, trx, caller, id, row.escrow_id, 'refund.rejected', { reason })
  })
}

/**
 * An operator settles an accepted refund, once: the row locked and moved only from `accepted`;
 * the settlement (settle.ts: the signed body, the reversal transfer, the credit note, the budgets'
 * release, the `refund.settled` receipt) and the event, all in one transaction.
 */
export async function approveRefund(deps: RefundDeps, caller: Caller, id: string) {
  // the client's name for the credit note: read before the transaction (the orgs area reads the pool)
  const found = await store.refundById(deps.ctx.db, id)
  const [org] = found ? await deps.orgs.orgs([found.org_id]) : []
  return move(deps, caller, id, async (trx, row) => {
    if (!caller.operator) throw rentalError('forbidden', 'only the platform’s operators may approve a refund')
    if (row.state !== 'accepted') throw wrongState(row, 'approved')
    await settleAccepted(deps, trx, caller, row, org?.name ?? row.org_id)
  })
}

/**
 * Settles an accepted refund, its row locked (settle.ts: the signed body, the reversal transfer,
 * the credit note, the budgets' release, the receipt), moves it to `settled` and records the event.
 */
export async function settleAccepted(
  deps: SettleDeps,
  trx: RentalDb,
  caller: Caller,
  row: RefundRow,
  orgName: string,
  data: Record<string, unknown> = {},
) {
  const done = await settle(deps, trx, row, { orgName, actor: caller.actor })
  await change(trx, row, ['accepted'], {
    state: 'settled',
    fee_part_fils: done.feePart,
    transfer_id: done.transferId,
    receipt_id: done.receipt.id,
    receipt_leaf_hash: done.receipt.leafHash,
    body: JSON.stringify(done.body),
    body_hash: done.hash,
    provider_signature: done.signature,
    credit_note_id: done.creditNote.id,
    credit_note_number: done.creditNote.number,
    updated_at: deps.ctx.now(),
  })
  await recordRefundEvent(deps, trx, caller, row.id, row.escrow_id, 'refund.settled', {
    amount_fils: Number(row.amount_fils),
    fee_part_fils: done.feePart,
    transfer_id: done.transferId,
    receipt_id: done.receipt.id,
    refund_hash: done.hash,
    credit_note: done.creditNote.number,
    ...data,
  })
  return done
}

async function move(
  deps: RefundDeps,
  caller: Caller,
  id: string,
  work: (trx: RentalDb, row: RefundRow, standing: { provider: boolean }) => Promise<void>,
) {
  const standing = await standingOf(deps, caller, id)
  await inTransaction(deps.ctx.db, async (trx) =>
    work(trx, (await store.refundById(trx, id, true))!, standing),
  )
  return (await store.refundById(deps.ctx.db, id))!
}

async function change(
  trx: RentalDb,
  row: RefundRow,
  from: RefundState[],
  to: Parameters<typeof store.moveRefund>[3],
) {
  // the row is locked, so this holds; the condition keeps it so without the lock too
  if (!(await store.moveRefund(trx, row.id, from, to))) throw wrongState(row, to.state)
}

export async function recordRefundEvent(
  deps: SettleDeps,
  trx: RentalDb,
  caller: Caller,
  id: string,
  escrowId: string,
  type: 'refund.requested' | 'refund.accepted' | 'refund.settled' | 'refund.rejected',
  data: Record<string, unknown>,
) {
  const row = type === 'refund.requested' ? undefined : await store.refundById(trx, id)
  await deps.events.record(trx, {
    orgId: row?.org_id ?? caller.orgId,
    type,
    subjects: { refund_id: id, escrow_id: escrowId },
    actor: caller.actor,
    data,
  })
}
