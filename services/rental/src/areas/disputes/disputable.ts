import type { RentalDb } from '../../db.ts'
import type { EscrowRow } from '../engagements/index.ts'
import { refundedOf } from '../refunds/index.ts'
import * as store from './store.ts'

/** What a new dispute may still question of an escrow (fils), or, when nothing, why (names the state). */
export interface Disputable {
  escrow: EscrowRow
  left: number
  why: string | null
}

/**
 * What is left to dispute of an escrow, in the caller's transaction (the escrow locked): all of an
 * open (held) one; of a released (paid) one, what refunds have not taken; nothing of one offered,
 * withdrawn or returned (no money held), refunded in full, or settled by a resolved dispute (its
 * resolution is final). A live dispute on it is the caller's 409 `dispute_open`.
 */
export async function disputableOf(trx: RentalDb, escrow: EscrowRow): Promise<Disputable> {
  const none = (why: string) => ({ escrow, left: 0, why })
  const amount = Number(escrow.amount_fils)
  switch (escrow.state) {
    case 'offered':
      return none(`the escrow ${escrow.id} is offered, not opened: nothing is held or paid for it yet`)
    case 'withdrawn':
      return none(`the escrow ${escrow.id} is withdrawn: nothing was held for it`)
    case 'returned':
      return none(`the escrow ${escrow.id} is returned to the wallet: nothing is left to dispute`)
    default:
  }
  const resolved = await store.disputeOn(trx, [escrow.id], ['resolved'])
  if (resolved)
    return none(
      `the escrow ${escrow.id} was settled by dispute ${resolved.id} (resolved): its resolution is final`,
    )
  if (escrow.state === 'open') return { escrow, left: amount, why: null }
  const refunded = await refundedOf(trx, escrow.id)
  const left = amount - refunded.committed
  if (left > 0) return { escrow, left, why: null }
  return none(
    refunded.settled >= amount
      ? `the escrow ${escrow.id} is refunded in full: nothing is left to dispute`
      : `the escrow ${escrow.id} is being refunded in full (refunds requested or accepted): nothing is left to dispute`,
  )
}
