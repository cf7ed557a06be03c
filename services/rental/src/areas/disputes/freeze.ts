import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import * as store from './store.ts'

/** The live dispute that freezes the escrow, if one does (in the caller's transaction). */
export const frozenBy = async (trx: RentalDb, escrowId: string) => {
  const live = await store.liveDisputeOn(trx, [escrowId])
  return live ? { id: live.id, state: live.state } : undefined
}

/** 409 naming the dispute when the escrow is frozen by a live one (the releases area, in its transaction). */
export async function assertNotFrozen(trx: RentalDb, escrowId: string) {
  const live = await store.liveDisputeOn(trx, [escrowId])
  if (live)
    throw rentalError(
      'escrow_frozen',
      `the escrow is frozen by dispute ${live.id} (${live.state}): it is not released while the dispute is open`,
    )
}
