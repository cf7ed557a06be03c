import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { Actor } from '../events/index.ts'
import { recordRefundEvent, settleAccepted, type SettleDeps } from './service.ts'
import * as store from './store.ts'

/**
 * What of a released escrow refunds have taken (requested, accepted or settled: all but rejected),
 * and how much of that is settled, in the caller's transaction (the disputes area asks before
 * opening a dispute: a refunded escrow has nothing left to dispute).
 */
export async function refundedOf(trx: RentalDb, escrowId: string) {
  return { committed: await store.committedOf(trx, escrowId), settled: await store.settledOf(trx, escrowId) }
}

/**
 * A refund decided by a dispute's resolution (the disputes area), settled at once in the caller's
 * transaction and counted against what is left to refund of the escrow. For an escrow released
 * before, the row is written `accepted` and settled as an approval settles it (settle.ts: the
 * signed body, the reversal transfer, the credit note, the budgets' release, the receipt). For an
 * escrow the dispute settled itself (`heldTransferId`), the money went back from the escrow to the
 * wallet in that transfer, which the row names: the escrow's invoice line shows all of it, so the
 * share gets its credit note (its VAT share is what that transfer did not post to platform:vat),
 * and the spend goes down as it does for a refund.
 */
export async function settleDisputeRefund(
  deps: SettleDeps,
  trx: RentalDb,
  input: {
    id: string
    orgId: string
    orgName: string
    escrowId: string
    amountFils: number
    reason: string
    disputeId: string
    actor: Actor
    heldTransferId?: string
  },
) {
  const escrow = await deps.engagements.escrowOfOrg(
    input.orgId,
    { escrowId: input.escrowId },
    { trx, lock: true },
  )
  if (escrow?.state !== 'released')
    throw rentalError('not_refundable', `the escrow ${input.escrowId} is not released: nothing was paid`)
  const amount = input.amountFils
  const left = Number(escrow.amount_fils) - (await store.committedOf(trx, escrow.id))
  if (amount > left)
    throw rentalError('not_refundable', `at most ${left} fils of escrow ${escrow.id} can still be refunded`)
  const engagement = (await deps.engagements.engagementOf(input.orgId, escrow.engagement_id, { trx }))!
  const now = deps.ctx.now()
  const base = {
    id: input.id,
    org_id: input.orgId,
    escrow_id: escrow.id,
    engagement_id: escrow.engagement_id,
    task_id: escrow.task_id,
    agent_did: engagement.agent_did,
    currency: escrow.currency,
    requested_fils: amount,
    amount_fils: amount,
    reason: input.reason,
    requested_by: input.actor.id,
    created_at: now,
    updated_at: now,
  }
  const caller = { orgId: input.orgId, operator: true, actor: input.actor }
  if (input.heldTransferId === undefined) {
    await store.insertRefund(trx, { ...base, state: 'accepted' })
    const row = (await store.refundById(trx, input.id, true))!
    const done = await settleAccepted(deps, trx, caller, row, input.orgName, { dispute_id: input.disputeId })
    return { id: input.id, transferId: done.transferId, receiptId: done.receipt.id }
  }
  const transferId = input.heldTransferId
  // the row first: its credit note names it
  await store.insertRefund(trx, { ...base, state: 'accepted' })
  const creditNote = await deps.invoices.issueCreditNote(trx, {
    orgId: input.orgId,
    orgName: input.orgName,
    refundId: input.id,
    escrowId: escrow.id,
    engagementId: escrow.engagement_id,
    taskId: escrow.task_id,
    agentDid: engagement.agent_did,
    amountFils: amount,
    transferId,
    reason: input.reason,
    actor: input.actor,
  })
  await deps.budgets.release(trx, {
    orgId: input.orgId,
    engagementId: escrow.engagement_id,
    agentDid: engagement.agent_did,
    amountFils: amount,
    at: new Date((escrow.body as { issued_at?: string }).issued_at ?? escrow.created_at),
  })
  const receipt = await deps.ctx.receipts.record(trx, {
    type: 'refund.settled',
    subject: input.id,
    data: {
      org_id: input.orgId,
      escrow_id: escrow.id,
      engagement_id: escrow.engagement_id,
      task_id: escrow.task_id,
      agent_did: engagement.agent_did,
      amount_fils: amount,
      fee_part_fils: 0,
      payout_part_fils: 0,
      currency: escrow.currency,
      transfer_id: transferId,
      reason: input.reason,
      dispute_id: input.disputeId,
      credit_note: creditNote.number,
    },
  })
  await store.moveRefund(trx, input.id, ['accepted'], {
    state: 'settled',
    fee_part_fils: 0,
    transfer_id: transferId,
    receipt_id: receipt.id,
    receipt_leaf_hash: receipt.leafHash,
    credit_note_id: creditNote.id,
    credit_note_number: creditNote.number,
    updated_at: now,
  })
  await recordRefundEvent(deps, trx, caller, input.id, escrow.id, 'refund.settled', {
    amount_fils: amount,
    fee_part_fils: 0,
    transfer_id: transferId,
    receipt_id: receipt.id,
    dispute_id: input.disputeId,
  })
  return { id: input.id, transferId, receiptId: receipt.id }
}
