import { randomUUID } from 'node:crypto'
import { vatIncluded, vatShareOf } from '@svc/kit'
import { b64uEncode } from '@svc/trust/base64url'
import { signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import type { RentalDb } from '../../db.ts'
import { bodyHash, engagementEvent, type EscrowRow, feeOf, walletOf } from '../engagements/index.ts'
import { settleDisputeRefund } from '../refunds/index.ts'
import { type Disputable, disputableOf } from './disputable.ts'
import type { Caller, DisputeDeps } from './service.ts'
import type { DisputeRow, Outcome } from './store.ts'

/** The client's share of one escrow in question: held (open) escrows first, then paid (released) ones. */
interface Part {
  escrow: EscrowRow
  held: boolean
  client_fils: number
}

/** The client's share taken from each escrow in turn, at most what is left to dispute of it. */
function allocate(escrows: Disputable[], clientFils: number): Part[] {
  let left = clientFils
  return escrows.map(({ escrow, left: disputable }) => {
    const take = Math.min(left, disputable)
    left -= take
    return { escrow, held: escrow.state === 'open', client_fils: take }
  })
}

/**
 * Settles a resolution in the resolving transaction, each move once (rail keys named by the dispute):
 * - a paid escrow's client share is refunded by the refunds area's settlement (a reversal transfer
 *   from the agent's payout and the fees, key `refund:<id>`);
 * - a held escrow with a client share is settled by the dispute in one transfer (key
 *   `dispute:<id>:escrow:<escrow>`): the share back from the escrow to the client's wallet, the rest
 *   paid out to the agent less its fee and the VAT inside it (to platform:vat: the escrow's VAT less
 *   the share's, which the share's credit note takes back); the escrow is then released (by the
 *   signed resolution, not a client's instruction) and the share recorded as a settled refund with
 *   its credit note, so it is never refunded twice;
 * - a held escrow without a client share is only unfrozen: the client releases it as before.
 * The resolution body is signed by the provider identity (JCS, Ed25519) and is the `dispute.resolved`
 * receipt's data with the transfers it made.
 */
export async function settle(
  deps: DisputeDeps,
  trx: RentalDb,
  caller: Caller & { orgName: string },
  row: DisputeRow,
  escrowIds: string[],
  outcome: Outcome,
  shares: { client: number; provider: number },
) {
  const escrows: Disputable[] = []
  for (const id of escrowIds)
    escrows.push(
      await disputableOf(
        trx,
        (await deps.engagements.escrowOfOrg(row.org_id, { escrowId: id }, { trx, lock: true }))!,
      ),
    )
  const parts = allocate(escrows, shares.client)
  const now = deps.ctx.now()
  const refundIds = new Map(
    parts.filter((p) => p.client_fils > 0).map((p) => [p.escrow.id, `ref_${randomUUID()}`]),
  )
  const body = {
    type: 'svc.dispute_resolution',
    v: 1,
    dispute_id: row.id,
    engagement_id: row.engagement_id,
    task_id: row.task_id,
    agent_did: row.agent_did,
    provider_did: deps.ctx.provider.did,
    outcome,
    amount_fils: Number(row.amount_fils),
    client_fils: shares.client,
    provider_fils: shares.provider,
    currency: row.currency,
    escrows: parts.map((p) => ({
      escrow_id: p.escrow.id,
      escrow_hash: p.escrow.hash,
      held: p.held,
      client_fils: p.client_fils,
      refund_id: refundIds.get(p.escrow.id) ?? null,
    })),
    resolved_at: now.toISOString(),
  }
  const signature = b64uEncode(signEd25519(deps.ctx.provider.seed, canonicalBytes(body)))
  const reason = `dispute ${row.id} resolved (${outcome})`
  const transfers: Record<string, string> = {}
  const refunds = []
  // paid escrows: the refunds area's reversal
  for (const p of parts.filter((p) => !p.held && p.client_fils > 0)) {
    const refund = await settleDisputeRefund(deps, trx, {
      id: refundIds.get(p.escrow.id)!,
      orgId: row.org_id,
      escrowId: p.escrow.id,
      amountFils: p.client_fils,
      reason,
      disputeId: row.id,
      orgName: caller.orgName,
      actor: caller.actor,
    })
    transfers[p.escrow.id] = refund.transferId
    refunds.push(refund.id)
  }
  // held escrows with a client share: settled here, in one transfer each
  const held = parts.filter((p) => p.held && p.client_fils > 0)
  const releases = []
  for (const p of held) {
    const amount = Number(p.escrow.amount_fils)
    const rest = amount - p.client_fils
    const fee = feeOf(rest, deps.ctx.config.feeBps)
    // the escrow's VAT as its invoice line shows it, less the share's (its credit note's)
    const escrowVat = vatIncluded(amount)
    const vat = escrowVat - vatShareOf(p.client_fils, amount, escrowVat)
    const transfer = await deps.ctx.rail.transfer(trx, {
      idempotencyKey: `dispute:${row.id}:escrow:${p.escrow.id}`,
      kind: 'dispute_settlement',
      postings: [
        { account: `escrow:${p.escrow.id}`, amount: -amount },
        { account: walletOf(row.org_id), amount: p.client_fils },
        { account: `payout:${row.agent_did}`, amount: rest - fee - vat },
        { account: 'platform:fees', amount: fee },
        { account: 'platform:vat', amount: vat },
      ].filter((x) => x.amount !== 0),
      memo: { dispute_id: row.id, escrow_id: p.escrow.id, engagement_id: row.engagement_id },
    })
    transfers[p.escrow.id] = transfer.id
    releases.push({ part: p, fee, vat: escrowVat, posted: vat, transfer })
  }
  const settlement = {
    transfers,
    refund_ids: refunds.concat(held.map((p) => refundIds.get(p.escrow.id)!)),
    unfrozen_escrow_ids: parts.filter((p) => p.held && p.client_fils === 0).map((p) => p.escrow.id),
  }
  const receipt = await deps.ctx.receipts.record(trx, {
    type: 'dispute.resolved',
    subject: row.id,
    data: {
      org_id: row.org_id,
      resolution: body,
      resolution_hash: bodyHash(body),
      resolution_signature: signature,
      ...settlement,
    },
  })
  for (const { part, fee, vat, posted, transfer } of releases) {
    const released = {
      ...part.escrow,
      state: 'released' as const,
      fee_fils: fee,
      vat_fils: vat,
      release_transfer_id: transfer.id,
      released_at: now,
    }
    await deps.engagements.markReleased(trx, part.escrow.id, {
      feeFils: fee,
      vatFils: vat,
      instruction: body,
      signature,
      transferId: transfer.id,
      receiptId: receipt.id,
      answer: {
        escrow: deps.engagements.escrowView(released),
        transfer: { id: transfer.id, postings: transfer.postings },
        receipt: { id: receipt.id, leaf_hash: receipt.leafHash },
      },
      at: now,
    })
    await engagementEvent(
      deps.events,
      trx,
      row.org_id,
      row.engagement_id,
      caller.actor,
      'escrow.released',
      {
        amount_fils: Number(part.escrow.amount_fils),
        fee_fils: fee,
        vat_fils: posted,
        payout_fils: Number(part.escrow.amount_fils) - part.client_fils - fee - posted,
        returned_fils: part.client_fils,
        currency: row.currency,
        transfer_id: transfer.id,
        receipt_id: receipt.id,
        dispute_id: row.id,
      },
      { escrow_id: part.escrow.id, ...(part.escrow.task_id ? { task_id: part.escrow.task_id } : {}) },
    )
    await settleDisputeRefund(deps, trx, {
      id: refundIds.get(part.escrow.id)!,
      orgId: row.org_id,
      escrowId: part.escrow.id,
      amountFils: part.client_fils,
      reason,
      disputeId: row.id,
      orgName: caller.orgName,
      actor: caller.actor,
      heldTransferId: transfer.id,
    })
  }
  return { body, signature, settlement, receiptId: receipt.id }
}
