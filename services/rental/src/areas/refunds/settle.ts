import { b64uEncode } from '@svc/trust/base64url'
import { signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import type { RentalDb } from '../../db.ts'
import { bodyHash, type EscrowBody, walletOf } from '../engagements/index.ts'
import type { Actor } from '../events/index.ts'
import type { SettleDeps } from './service.ts'
import type { RefundRow } from './store.ts'

/**
 * What an approved refund is, signed by the provider key like the offer package's bodies: the
 * JCS (RFC 8785) bytes of this body, Ed25519, base64url; named by `sha256:<hex>` of those bytes.
 */
export type RefundBody = {
  type: 'svc.refund'
  v: 1
  refund_id: string
  escrow_id: string
  escrow_hash: string
  engagement_id: string
  task_id: string | null
  agent_did: string
  payer_did: string
  provider_did: string
  amount_fils: number
  fee_part_fils: number
  /** The VAT the refund takes back from platform:vat (its credit note's). */
  vat_part_fils: number
  payout_part_fils: number
  currency: string
  reason: string
  issued_at: string
}

/**
 * The fee's part of a refund: ⌊amount × fee / paid⌋ (BigInt: exact up to 2^53); the rest comes
 * back from the agent's payout. So a full refund returns exactly the fee and the payout.
 */
export function feePartOf(amountFils: number, feeFils: number, paidFils: number): number {
  if (paidFils <= 0) return 0
  return Number((BigInt(amountFils) * BigInt(feeFils)) / BigInt(paidFils))
}

/** What the settlement wrote, for the refund's row and its event. */
export interface Settlement {
  body: RefundBody
  hash: string
  signature: string
  feePart: number
  transferId: string
  receipt: { id: string; leafHash: string }
  creditNote: { id: string; number: string }
}

/**
 * Settles an accepted refund in the approval's transaction (its row locked): the body signed by
 * the provider key; one reversal transfer (rail key `refund:<id>`): `payout:<agent>`,
 * `platform:fees` and `platform:vat` back to the client's wallet in the proportions paid (the VAT
 * part the credit note's, from invoices' creditVatOf); the credit note (invoices);
 * the amount released from the budgets' spend of the period the escrow was committed in; the
 * `refund.settled` receipt naming all of them. All or nothing: a kill -9 mid-way leaves the refund
 * accepted, and the next approval settles it.
 */
export async function settle(
  deps: SettleDeps,
  trx: RentalDb,
  row: RefundRow,
  who: { orgName: string; actor: Actor },
): Promise<Settlement> {
  const escrow = (await deps.engagements.escrowOfOrg(row.org_id, { escrowId: row.escrow_id }, { trx }))!
  const escrowBody = escrow.body as Partial<EscrowBody>
  const amount = Number(row.amount_fils)
  const feePart = feePartOf(amount, Number(escrow.fee_fils ?? 0), Number(escrow.amount_fils))
  const vatPart = await deps.invoices.creditVatOf(trx, row.org_id, row.escrow_id, amount)
  const payoutPart = amount - feePart - vatPart
  const body: RefundBody = {
    type: 'svc.refund',
    v: 1,
    refund_id: row.id,
    escrow_id: row.escrow_id,
    escrow_hash: escrow.hash,
    engagement_id: row.engagement_id,
    task_id: row.task_id,
    agent_did: row.agent_did,
    payer_did: escrowBody.payer_did ?? '',
    provider_did: deps.ctx.provider.did,
    amount_fils: amount,
    fee_part_fils: feePart,
    vat_part_fils: vatPart,
    payout_part_fils: payoutPart,
    currency: row.currency,
    reason: row.reason,
    issued_at: deps.ctx.now().toISOString(),
  }
  const signature = b64uEncode(signEd25519(deps.ctx.provider.seed, canonicalBytes(body)))
  const hash = bodyHash(body)
  const postings = [
    { account: `payout:${row.agent_did}`, amount: -payoutPart },
    { account: 'platform:fees', amount: -feePart },
    { account: 'platform:vat', amount: -vatPart },
    { account: walletOf(row.org_id), amount },
  ].filter((p) => p.amount !== 0)
  const transfer = await deps.ctx.rail.transfer(trx, {
    idempotencyKey: `refund:${row.id}`,
    kind: 'refund',
    postings,
    memo: {
      refund_id: row.id,
      escrow_id: row.escrow_id,
      engagement_id: row.engagement_id,
      refund_hash: hash,
    },
  })
  const creditNote = await deps.invoices.issueCreditNote(trx, {
    orgId: row.org_id,
    orgName: who.orgName,
    refundId: row.id,
    escrowId: row.escrow_id,
    engagementId: row.engagement_id,
    taskId: row.task_id,
    agentDid: row.agent_did,
    amountFils: amount,
    transferId: transfer.id,
    reason: row.reason,
    actor: who.actor,
  })
  // the spend goes down in the period the escrow's money was committed in (its body's issue time)
  await deps.budgets.release(trx, {
    orgId: row.org_id,
    engagementId: row.engagement_id,
    agentDid: row.agent_did,
    amountFils: amount,
    at: new Date(escrowBody.issued_at ?? escrow.created_at),
  })
  const receipt = await deps.ctx.receipts.record(trx, {
    type: 'refund.settled',
    subject: row.id,
    data: {
      org_id: row.org_id,
      escrow_id: row.escrow_id,
      engagement_id: row.engagement_id,
      task_id: row.task_id,
      agent_did: row.agent_did,
      amount_fils: amount,
      fee_part_fils: feePart,
      vat_part_fils: vatPart,
      payout_part_fils: payoutPart,
      currency: row.currency,
      transfer_id: transfer.id,
      reason: row.reason,
      refund_hash: hash,
      provider_signature: signature,
      credit_note: creditNote.number,
    },
  })
  return {
    body,
    hash,
    signature,
    feePart,
    transferId: transfer.id,
    receipt: { id: receipt.id, leafHash: receipt.leafHash },
    creditNote,
  }
}
