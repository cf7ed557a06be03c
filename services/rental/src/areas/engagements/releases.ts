import { createHash } from 'node:crypto'
import { badRequest, conflict, notFound } from '@svc/kit'
import { canonicalize } from '@svc/trust/jcs'
import { inTransaction } from '../../db.ts'
import { feeOf, type ReleaseBody, signedBy } from './bodies.ts'
import { escrowView, type MoneyDeps } from './service.ts'
import {
  type EngagementRow,
  type EscrowRow,
  engagementOf,
  escrowByHash,
  escrowsOf,
  idempotentAnswer,
  keepIdempotentAnswer,
  receiptState,
} from './store.ts'

/** The release instruction the client signs for an escrow (issued now; any issued_at is accepted back). */
function instructionFor(deps: MoneyDeps, engagement: EngagementRow, escrow: EscrowRow): ReleaseBody {
  const amount = Number(escrow.amount_fils)
  return {
    type: 'svc.release',
    v: 1,
    escrow_hash: escrow.hash,
    engagement_id: engagement.id,
    amount_fils: amount,
    payee_did: engagement.agent_did,
    fee_fils: feeOf(amount, deps.feeBps),
    payer_did: engagement.client_did,
    issued_at: deps.now().toISOString(),
  }
}

/**
 * What the client still has to sign: escrows offered and not yet opened, and release requests:
 * open escrows whose task has completed, with the receipt's leaf hash and the release body to sign.
 */
export async function pendingReleases(deps: MoneyDeps, subject: string, id: string) {
  const engagement = await engagementOf(deps.db, subject, id)
  if (!engagement) throw notFound(`no engagement ${id}`, 'engagement_not_found')
  const escrows = await escrowsOf(deps.db, id)
  const taskIds = escrows.filter((e) => e.state === 'open' && e.task_id).map((e) => e.task_id!)
  const tasks = taskIds.length
    ? await deps.db
        .selectFrom('tasks')
        .select(['id', 'state', 'completed_at', 'receipt_id', 'receipt_leaf_hash'])
        .where('id', 'in', taskIds)
        .where('state', '=', 'completed')
        .execute()
    : []
  const releases = []
  for (const escrow of escrows) {
    const task = tasks.find((t) => t.id === escrow.task_id)
    if (escrow.state !== 'open' || !task) continue
    const receipt = task.receipt_id ? await receiptState(deps.db, task.receipt_id) : undefined
    releases.push({
      escrow: escrowView(escrow),
      task: {
        id: task.id,
        state: task.state,
        completed_at: task.completed_at?.toISOString() ?? null,
        receipt: {
          id: task.receipt_id,
          leaf_hash: task.receipt_leaf_hash,
          ledger_index: receipt?.ledger_index === null || !receipt ? null : Number(receipt.ledger_index),
        },
      },
      instruction: instructionFor(deps, engagement, escrow),
    })
  }
  return {
    escrows_to_sign: escrows.filter((e) => e.state === 'offered').map(escrowView),
    releases,
  }
}

export interface ReleaseInput {
  escrow_hash: string
  instruction: { body: Record<string, unknown>; signature: string }
}

const digestOf = (value: unknown) => createHash('sha256').update(canonicalize(value)).digest('hex')

/**
 * Pays an escrow out exactly once. The instruction must be the client's signature over the
 * release body naming this escrow, this engagement, its amount, the agent as payee and the fee.
 * In one transaction the escrow row is locked: released already → the first answer again (same
 * transfer); else `escrow:<id>` → `payout:<agent>` (amount − fee) and `platform:fees` (fee) with
 * the rail key `release:<id>`, the escrow marked released, an `escrow.released` receipt recorded.
 */
export async function release(
  deps: MoneyDeps,
  subject: string,
  id: string,
  input: ReleaseInput,
  idempotencyKey?: string,
) {
  const engagement = await engagementOf(deps.db, subject, id)
  if (!engagement) throw notFound(`no engagement ${id}`, 'engagement_not_found')
  const scope = `release:${id}`
  const digest = digestOf(input)
  if (idempotencyKey) {
    const earlier = await idempotentAnswer(deps.db, subject, scope, idempotencyKey)
    if (earlier && earlier.request_digest !== digest)
      throw conflict('this Idempotency-Key was used for another request', 'idempotency_key_reused')
    if (earlier) return earlier.body as ReleaseAnswer
  }
  const escrow = await escrowByHash(deps.db, id, input.escrow_hash)
  if (!escrow) throw notFound(`no escrow ${input.escrow_hash} in this engagement`, 'escrow_not_found')
  const body = input.instruction.body
  const { issued_at: _issuedAt, ...expected } = instructionFor(deps, engagement, escrow)
  const amount = expected.amount_fils
  const keys = [...Object.keys(expected), 'issued_at'].sort().join()
  if (
    Object.keys(body).sort().join() !== keys ||
    typeof body.issued_at !== 'string' ||
    Object.entries(expected).some(([k, v]) => body[k] !== v)
  )
    throw badRequest(
      'the instruction body is not the release of this escrow (see releases/pending)',
      'instruction_mismatch',
    )
  if (!signedBy(engagement.client_did, body, input.instruction.signature))
    throw badRequest('the instruction is not signed by the client', 'bad_signature')

  const answer = await inTransaction(deps.db, async (trx) => {
    const locked = (await escrowByHash(trx, id, input.escrow_hash, true))!
    if (locked.state === 'released') return locked.release_answer as ReleaseAnswer
    if (locked.state !== 'open') throw conflict('the escrow is not open: sign it first', 'escrow_not_open')
    const task = locked.task_id
      ? await trx
          .selectFrom('tasks')
          .select(['id', 'state'])
          .where('id', '=', locked.task_id)
          .executeTakeFirst()
      : undefined
    if (task?.state !== 'completed')
      throw conflict('the escrow’s task has not completed', 'task_not_completed')
    const fee = expected.fee_fils
    const postings = [
      { account: `escrow:${locked.id}`, amount: -amount },
      { account: `payout:${engagement.agent_did}`, amount: amount - fee },
      { account: 'platform:fees', amount: fee },
    ].filter((p) => p.amount !== 0)
    const transfer = await deps.rail.transfer(trx, {
      idempotencyKey: `release:${locked.id}`,
      kind: 'escrow_release',
      postings,
      memo: { escrow_id: locked.id, engagement_id: id, escrow_hash: locked.hash },
    })
    const receipt = await deps.receipts.record(trx, {
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
        payout_fils: amount - fee,
        currency: 'AED',
        transfer_id: transfer.id,
        instruction: body,
        instruction_signature: input.instruction.signature,
      },
    })
    const releasedAt = deps.now()
    const released = {
      ...locked,
      state: 'released' as const,
      fee_fils: fee,
      release_transfer_id: transfer.id,
      released_at: releasedAt,
    }
    const result: ReleaseAnswer = {
      escrow: escrowView(released),
      transfer: { id: transfer.id, postings: transfer.postings },
      receipt: { id: receipt.id, leaf_hash: receipt.leafHash },
    }
    await trx
      .updateTable('escrows')
      .set({
        state: 'released',
        fee_fils: fee,
        release_instruction: JSON.stringify(body),
        release_signature: input.instruction.signature,
        release_transfer_id: transfer.id,
        release_receipt_id: receipt.id,
        release_answer: JSON.stringify(result),
        released_at: releasedAt,
      })
      .where('id', '=', locked.id)
      .execute()
    if (idempotencyKey)
      await keepIdempotentAnswer(trx, {
        subject,
        scope,
        key: idempotencyKey,
        digest,
        status: 200,
        body: result,
      })
    return result
  })
  if (idempotencyKey)
    await keepIdempotentAnswer(deps.db, {
      subject,
      scope,
      key: idempotencyKey,
      digest,
      status: 200,
      body: answer,
    })
  return answer
}

export interface ReleaseAnswer {
  escrow: ReturnType<typeof escrowView>
  transfer: { id: string; postings: Array<{ account: string; amount: number }> }
  receipt: { id: string; leaf_hash: string }
}
