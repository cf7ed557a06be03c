import { idempotentWrite, replayOf, vatIncluded } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { rentalError } from '../../errors.ts'
import {
  engagementEvent,
  engagementNotFound,
  type EngagementRow,
  type EngagementService,
  type EscrowRow,
  feeOf,
  type ReleaseBody,
  signedBy,
} from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { OutboxService } from '../outbox/index.ts'
import type { TaskService } from '../tasks/index.ts'
import type { DisputeService } from '../disputes/index.ts'

export interface ReleaseDeps {
  ctx: Pick<RentalContext, 'db' | 'rail' | 'receipts' | 'config' | 'now'>
  engagements: EngagementService
  tasks: TaskService
  outbox: OutboxService
  events: EventService
  disputes: DisputeService
}

/** The release instruction the client signs for an escrow (issued now; any issued_at is accepted back). */
function instructionFor(deps: ReleaseDeps, engagement: EngagementRow, escrow: EscrowRow): ReleaseBody {
  const amount = Number(escrow.amount_fils)
  return {
    type: 'svc.release',
    v: 1,
    escrow_hash: escrow.hash,
    engagement_id: engagement.id,
    amount_fils: amount,
    payee_did: engagement.agent_did,
    fee_fils: feeOf(amount, deps.ctx.config.feeBps),
    vat_fils: vatIncluded(amount),
    payer_did: engagement.client_did,
    issued_at: deps.ctx.now().toISOString(),
  }
}

/**
 * What the client still has to sign: escrows offered and not yet opened, and release requests:
 * open escrows whose task has completed, with the receipt's leaf hash and the release body to sign.
 */
export async function pendingReleases(deps: ReleaseDeps, subject: string, id: string) {
  const engagement = await deps.engagements.engagementOf(subject, id)
  if (!engagement) throw engagementNotFound(id)
  const escrows = await deps.engagements.escrowsOf(id)
  const taskIds = escrows.filter((e) => e.state === 'open' && e.task_id).map((e) => e.task_id!)
  const tasks = await deps.tasks.completed(taskIds)
  const releases = []
  for (const escrow of escrows) {
    const task = tasks.find((t) => t.id === escrow.task_id)
    if (escrow.state !== 'open' || !task) continue
    const ledgerIndex = task.receipt_id ? await deps.outbox.ledgerIndexOf(task.receipt_id) : null
    releases.push({
      escrow: deps.engagements.escrowView(escrow),
      task: {
        id: task.id,
        state: task.state,
        completed_at: task.completed_at?.toISOString() ?? null,
        receipt: {
          id: task.receipt_id,
          leaf_hash: task.receipt_leaf_hash,
          ledger_index: ledgerIndex,
        },
      },
      instruction: instructionFor(deps, engagement, escrow),
    })
  }
  return {
    escrows_to_sign: escrows.filter((e) => e.state === 'offered').map(deps.engagements.escrowView),
    releases,
  }
}

export interface ReleaseInput {
  escrow_hash: string
  instruction: { body: Record<string, unknown>; signature: string }
}

/**
 * Pays an escrow out exactly once. The instruction must be the client's signature over the
 * release body naming this escrow, this engagement, its amount, the agent as payee, the fee and
 * the VAT inside the amount (prices are VAT-inclusive). In one transaction the escrow row is
 * locked: released already → the first answer again (same transfer); else `escrow:<id>` →
 * `payout:<agent>` (amount − fee − VAT), `platform:fees` (fee) and `platform:vat` (the VAT
 * payable) with the rail key `release:<id>`, the escrow marked released, an `escrow.released`
 * receipt recorded.
 */
export async function release(
  deps: ReleaseDeps,
  subject: string,
  id: string,
  input: ReleaseInput,
  idempotencyKey: string | undefined,
  actor: Actor,
): Promise<ReleaseAnswer> {
  const engagement = await deps.engagements.engagementOf(subject, id)
  if (!engagement) throw engagementNotFound(id)
  // the route's published contract answers a reused key 409 (the kit's default is 422)
  const request = {
    owner: subject,
    scope: `release:${id}`,
    key: idempotencyKey,
    request: input,
    reusedStatus: 409,
  }
  // a kept answer is given again before anything is checked against the escrow as it is now
  const earlier = await replayOf<ReleaseAnswer>(deps.ctx.db, request)
  if (earlier) return earlier.body
  const escrow = await deps.engagements.escrowByHash(id, input.escrow_hash)
  if (!escrow) throw rentalError('escrow_not_found', `no escrow ${input.escrow_hash} in this engagement`)
  const body = input.instruction.body
  const { issued_at: _issuedAt, ...expected } = instructionFor(deps, engagement, escrow)
  const amount = expected.amount_fils
  const keys = [...Object.keys(expected), 'issued_at'].sort().join()
  if (
    Object.keys(body).sort().join() !== keys ||
    typeof body.issued_at !== 'string' ||
    Object.entries(expected).some(([k, v]) => body[k] !== v)
  )
    throw rentalError(
      'instruction_mismatch',
      'the instruction body is not the release of this escrow (see releases/pending)',
    )
  if (!signedBy(engagement.client_did, body, input.instruction.signature))
    throw rentalError('bad_signature', 'the instruction is not signed by the client')

  const answer = await idempotentWrite(deps.ctx.db, request, async (trx) => {
    const locked = (await deps.engagements.escrowByHash(id, input.escrow_hash, { trx, lock: true }))!
    if (locked.state === 'released') return { status: 200, body: locked.release_answer as ReleaseAnswer }
    if (locked.state !== 'open') throw rentalError('escrow_not_open', 'the escrow is not open: sign it first')
    await deps.disputes.assertNotFrozen(trx, locked.id)
    if (!locked.task_id || (await deps.tasks.stateOf(locked.task_id, trx)) !== 'completed')
      throw rentalError('task_not_completed', 'the escrow’s task has not completed')
    const fee = expected.fee_fils
    const vat = expected.vat_fils
    const payout = amount - fee - vat
    const postings = [
      { account: `escrow:${locked.id}`, amount: -amount },
      { account: `payout:${engagement.agent_did}`, amount: payout },
      { account: 'platform:fees', amount: fee },
      { account: 'platform:vat', amount: vat },
    ].filter((p) => p.amount !== 0)
    const transfer = await deps.ctx.rail.transfer(trx, {
      idempotencyKey: `release:${locked.id}`,
      kind: 'escrow_release',
      postings,
      memo: { escrow_id: locked.id, engagement_id: id, escrow_hash: locked.hash },
    })
    const receipt = await deps.ctx.receipts.record(trx, {
      type: 'escrow.released',
      subject: locked.id,
      data: {
        engagement_id: id,
        escrow_hash: locked.hash,
        task_id: locked.task_id,
        agent_did: engagement.agent_did,
        client_did: engagement.client_did,
        amount_fils: amount,
        fee_fils: fee,
        vat_fils: vat,
        payout_fils: payout,
        currency: 'AED',
        transfer_id: transfer.id,
        instruction: body,
        instruction_signature: input.instruction.signature,
      },
    })
    const releasedAt = deps.ctx.now()
    const released = {
      ...locked,
      state: 'released' as const,
      fee_fils: fee,
      vat_fils: vat,
      release_transfer_id: transfer.id,
      released_at: releasedAt,
    }
    const result: ReleaseAnswer = {
      escrow: deps.engagements.escrowView(released),
      transfer: { id: transfer.id, postings: transfer.postings },
      receipt: { id: receipt.id, leaf_hash: receipt.leafHash },
    }
    await deps.engagements.markReleased(trx, locked.id, {
      feeFils: fee,
      vatFils: vat,
      instruction: body,
      signature: input.instruction.signature,
      transferId: transfer.id,
      receiptId: receipt.id,
      answer: result,
      at: releasedAt,
    })
    await engagementEvent(
      deps.events,
      trx,
      subject,
      id,
      actor,
      'escrow.released',
      {
        amount_fils: amount,
        fee_fils: fee,
        vat_fils: vat,
        payout_fils: payout,
        currency: 'AED',
        transfer_id: transfer.id,
        receipt_id: receipt.id,
      },
      { escrow_id: locked.id, task_id: locked.task_id },
    )
    return { status: 200, body: result }
  })
  return answer.body
}

export interface ReleaseAnswer {
  escrow: ReturnType<EngagementService['escrowView']>
  transfer: { id: string; postings: Array<{ account: string; amount: number }> }
  receipt: { id: string; leaf_hash: string }
}
